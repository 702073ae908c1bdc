//! Forwarding on one connection pair: plain side to hop and back, with the idle timeout and
//! the checks after the tag.

use super::*;

impl Proxy {
    /// Completes once nothing was forwarded for `limits.idle`. A write stuck on a peer that
    /// does not read counts as nothing forwarded.
    pub(super) async fn idle(&self, pair: &Pair) {
        loop {
            let due = pair.start + Duration::from_nanos(pair.last.load(Ordering::Relaxed)) + self.limits.idle;
            if Instant::now() >= due {
                return;
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }

    /// Plain side → hop: one ADU at a time, bounded, sealed; `first` goes out before the rest.
    pub(super) async fn outbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        pair: &Pair,
    ) -> Result<(), String> {
        let mut buf = Vec::with_capacity(MAX_ADU);
        let mut next = first;
        loop {
            let adu = match next.take() {
                Some(adu) => adu,
                None => match self.next_plain(r, &mut buf).await? {
                    Some(adu) => adu,
                    None => return Ok(()),
                },
            };
            let Some(frame) = self.seal_adu(&adu, pair)? else { continue };
            write_record(w, &frame).await?;
            self.stats.sent.fetch_add(1, Ordering::Relaxed);
            pair.touch();
        }
    }

    /// The hop frame of one ADU from the plain side: the ADU itself on a plain hop; sealed with
    /// the connection id, and (master side) the ms since the handshake or (slave side) the
    /// counter of the request it answers. None: a response that answers no request in flight.
    pub(super) fn seal_adu(&self, adu: &[u8], pair: &Pair) -> Result<Option<Vec<u8>>, String> {
        let Hop::Sealed { sender, .. } = &self.hop else { return Ok(Some(adu.to_vec())) };
        let mut conn = pair.conn();
        let ext = match self.side {
            Side::Master => millis(conn.t0.elapsed()),
            Side::Slave => match conn.take(|&(_, t)| t == tid(adu)) {
                Some((c, _)) => c,
                None => {
                    self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                    self.say(&format!(
                        "dropped a response of the slave: transaction {} is in no request forwarded on this connection",
                        tid(adu)
                    ));
                    return Ok(None);
                }
            },
        };
        let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
        let c = s.take()?;
        let frame = s.seal(0, c, ext, &conn.id, adu)?;
        if self.side == Side::Master {
            conn.push(c, tid(adu));
        }
        Ok(Some(frame))
    }

    /// Hop → plain side: one record at a time, bounded, checked and opened; `first` (already
    /// opened) goes out before the rest.
    pub(super) async fn inbound(
        &self,
        r: &mut OwnedReadHalf,
        w: &mut OwnedWriteHalf,
        first: Option<Vec<u8>>,
        mut rec: Vec<u8>,
        pair: &Pair,
    ) -> Result<(), String> {
        let mut next = first;
        loop {
            let adu = match next.take() {
                Some(adu) => adu,
                None => match self.next_from_hop(r, &mut rec, pair.conn.as_ref()).await? {
                    Some(adu) => adu,
                    None => return Ok(()),
                },
            };
            w.write_all(&adu).await.map_err(|e| format!("write: {e}"))?;
            self.stats.delivered.fetch_add(1, Ordering::Relaxed);
            pair.touch();
        }
    }

    /// The next ADU from the plain side (the master, or the slave); None when the stream ended
    /// cleanly.
    pub(super) async fn next_plain<R: AsyncRead + Unpin>(
        &self,
        r: &mut R,
        buf: &mut Vec<u8>,
    ) -> Result<Option<Vec<u8>>, String> {
        match adu::read_adu(r, buf).await {
            Ok(true) => Ok(Some(buf.clone())),
            Ok(false) => Ok(None),
            Err(AduError::Io(e)) => Err(e),
            Err(e) => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                Err(format!("malformed ADU: {e}"))
            }
        }
    }

    /// One hop record into `rec`: its length; None when the stream ended cleanly between records.
    pub(super) async fn read_record<R: AsyncRead + Unpin>(
        &self,
        r: &mut R,
        rec: &mut [u8],
    ) -> Result<Option<usize>, String> {
        let mut len = [0u8; 2];
        match r.read_exact(&mut len).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(format!("hop read: {e}")),
        }
        let n = u16::from_be_bytes(len) as usize;
        if n > MAX_RECORD {
            self.stats.malformed.fetch_add(1, Ordering::Relaxed);
            return Err(format!("hop record of {n} B is over the {MAX_RECORD} B bound"));
        }
        r.read_exact(&mut rec[..n]).await.map_err(|e| format!("hop record cut short: {e}"))?;
        Ok(Some(n))
    }

    /// Count-free log of a refused hop frame: at most one line a second, since a keyless sender
    /// can send frames as fast as it likes.
    pub(super) fn refused(&self, why: &str) {
        match self.frames_refused.due() {
            Some(1) => self.say(&format!("refused a hop frame ({why})")),
            Some(n) => self.say(&format!("refused a hop frame ({why}); {n} frames refused since the last such line")),
            None => {}
        }
    }

    /// The next hop record that passes the receiving checks, opened: one ADU. Refused frames
    /// are counted, logged and dropped (the peer sees no answer, never altered data); None when
    /// the stream ended cleanly between records.
    pub(super) async fn next_from_hop<R: AsyncRead + Unpin>(
        &self,
        r: &mut R,
        rec: &mut [u8],
        conn: Option<&Mutex<Conn>>,
    ) -> Result<Option<Vec<u8>>, String> {
        loop {
            let Some(n) = self.read_record(r, rec).await? else { return Ok(None) };
            let adu = match (&self.hop, conn) {
                (Hop::Sealed { receiver, .. }, Some(conn)) => {
                    let (id, last) = {
                        let c = conn.lock().unwrap_or_else(|e| e.into_inner());
                        (c.id, c.last_in)
                    };
                    let opened = receiver.lock().unwrap_or_else(|e| e.into_inner()).open(
                        &rec[..n],
                        &id,
                        false,
                        Some(last),
                        &self.stats.out_of_handshake,
                    );
                    match opened {
                        Ok((h, adu)) => {
                            conn.lock().unwrap_or_else(|e| e.into_inner()).last_in = h.counter;
                            if let Err(e) = adu::check(&adu) {
                                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                                return Err(format!("hop record is not one ADU: {e}"));
                            }
                            match self.admit_opened(&h, &adu, conn).await? {
                                true => adu,
                                false => continue,
                            }
                        }
                        Err(why) => {
                            self.refused(why);
                            continue;
                        }
                    }
                }
                _ => {
                    let adu = rec[..n].to_vec();
                    if let Err(e) = adu::check(&adu) {
                        self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                        return Err(format!("hop record is not one ADU: {e}"));
                    }
                    adu
                }
            };
            return Ok(Some(adu));
        }
    }

    /// The rules after the tag for an authentic ADU. Slave side: a write older than the write
    /// deadline is refused, and a write's counter is on disk before the slave sees the write;
    /// the request joins the ones in flight. Master side: the response must name a request in
    /// flight with its transaction id. Ok(false): refused (counted, logged).
    pub(super) async fn admit_opened(&self, h: &ModbusHeader, adu: &[u8], conn: &Mutex<Conn>) -> Result<bool, String> {
        let Hop::Sealed { receiver, .. } = &self.hop else { return Ok(true) };
        match self.side {
            Side::Slave => {
                if hop::is_write(adu) {
                    let deadline = receiver.lock().unwrap_or_else(|e| e.into_inner()).write_deadline;
                    let here = millis(conn.lock().unwrap_or_else(|e| e.into_inner()).t0.elapsed());
                    // The master's clock started later than ours (after the reply's transit),
                    // so `here - ext` is at least the write's real age: a delay is never hidden.
                    let age = here.saturating_sub(h.ext);
                    if age > millis(deadline) {
                        self.stats.stale_writes.fetch_add(1, Ordering::Relaxed);
                        self.say(&format!(
                            "refused a write (function {}, counter {}): {age} ms old by the handshake clocks, over \
                             the {} ms --write-deadline",
                            adu[adu::MBAP_LEN],
                            h.counter,
                            millis(deadline)
                        ));
                        return Ok(false);
                    }
                    // Durable before the slave acts: a crash right after the write leaves its
                    // counter in the replay state.
                    self.save_floor().await?;
                }
                conn.lock().unwrap_or_else(|e| e.into_inner()).push(h.counter, tid(adu));
                Ok(true)
            }
            Side::Master => {
                let bound = conn.lock().unwrap_or_else(|e| e.into_inner()).take(|&(c, t)| c == h.ext && t == tid(adu));
                if bound.is_none() {
                    self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                    self.refused("a response bound to no request in flight on this connection");
                    return Ok(false);
                }
                Ok(true)
            }
        }
    }
}
