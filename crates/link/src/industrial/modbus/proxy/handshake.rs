//! The handshake that opens every sealed hop connection: hello and reply, each side's
//! accepted mark checked against the other's counters.

use super::*;

impl Proxy {
    /// Master side: send the hello (Nm and this side's accepted mark for slave → master), take
    /// the reply (Ns and the slave side's mark for master → slave, bound to the hello), and
    /// check that mark against this process's counters.
    pub(super) async fn master_handshake<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
        &self,
        r: &mut R,
        w: &mut W,
        rec: &mut [u8],
    ) -> Result<Conn, String> {
        let Hop::Sealed { sender, receiver } = &self.hop else { unreachable!("sealed hops only") };
        let nm: [u8; NONCE_LEN] = rand::random();
        let mark = receiver.lock().unwrap_or_else(|e| e.into_inner()).top;
        let (hello, c_hello) = {
            let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
            let c = s.take()?;
            (s.seal(FLAG_HANDSHAKE, c, 0, &[], &hop::handshake_body(&nm, mark))?, c)
        };
        write_record(w, &hello).await?;
        loop {
            let Some(n) = self.read_record(r, rec).await? else {
                return Err("the slave-side proxy closed the hop during the handshake".into());
            };
            let opened = receiver.lock().unwrap_or_else(|e| e.into_inner()).open(
                &rec[..n],
                &nm,
                true,
                None,
                &self.stats.out_of_handshake,
            );
            let (h, body) = match opened {
                Ok(o) => o,
                Err(why) => {
                    self.refused(why);
                    continue;
                }
            };
            if h.ext != c_hello {
                self.stats.unbound.fetch_add(1, Ordering::Relaxed);
                self.refused("a handshake reply to another hello");
                continue;
            }
            let Some((ns, peer_top)) = hop::parse_handshake(&body) else {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err("the handshake reply is not 24 bytes of nonce and mark".into());
            };
            let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
            let highest = s.highest.unwrap_or(c_hello);
            if !hop::mark_consistent(peer_top, highest, c_hello) {
                self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                let why = rollback_message(s.device, peer_top, c_hello, "the slave-side proxy");
                s.halted = Some(why.clone());
                return Err(why);
            }
            drop(s);
            self.stats.handshakes.fetch_add(1, Ordering::Relaxed);
            return Ok(Conn {
                id: hop::conn_id(&nm, &ns),
                t0: Instant::now(),
                last_in: h.counter,
                in_flight: VecDeque::new(),
            });
        }
    }

    /// Slave side: wait for an authentic hello (other frames are refused, counted and skipped),
    /// check the master side's mark against this process's counters before sealing anything,
    /// reply with Ns and this side's mark; a hello at or below the replay floor is answered (so
    /// a rolled-back master side learns it) and its connection closed. None: the stream ended.
    pub(super) async fn slave_handshake<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
        &self,
        r: &mut R,
        w: &mut W,
        rec: &mut [u8],
    ) -> Result<Option<Conn>, String> {
        let Hop::Sealed { sender, receiver } = &self.hop else { unreachable!("sealed hops only") };
        loop {
            let Some(n) = self.read_record(r, rec).await? else { return Ok(None) };
            let (opened, before, floor) = {
                let mut rx = receiver.lock().unwrap_or_else(|e| e.into_inner());
                let before = rx.top;
                (rx.open(&rec[..n], &[], true, None, &self.stats.out_of_handshake), before, rx.floor)
            };
            let (h, body) = match opened {
                Ok(o) => o,
                Err(why) => {
                    self.refused(why);
                    continue;
                }
            };
            let Some((nm, peer_top)) = hop::parse_handshake(&body) else {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                return Err("the hello is not 24 bytes of nonce and mark".into());
            };
            let ns: [u8; NONCE_LEN] = rand::random();
            let reply = {
                let mut s = sender.lock().unwrap_or_else(|e| e.into_inner());
                let c = s.take()?;
                if !hop::mark_consistent(peer_top, c, c) {
                    // Checked before sealing: this side's counter state never reuses a nonce.
                    self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                    let why = rollback_message(s.device, peer_top, c, "the master-side proxy");
                    s.halted = Some(why.clone());
                    return Err(why);
                }
                s.seal(FLAG_HANDSHAKE, c, h.counter, &nm, &hop::handshake_body(&ns, before))?
            };
            write_record(w, &reply).await?;
            if let Some(f) = floor.filter(|&f| h.counter <= f) {
                self.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
                let mut rx = receiver.lock().unwrap_or_else(|e| e.into_inner());
                rx.tally.refused[Refusal::Replay as usize] += 1;
                return Err(format!(
                    "hello with counter {} of device {}, at or below {f} accepted before this proxy started: a \
                     replayed hello, or the master side's counter state was rolled back",
                    h.counter, rx.device
                ));
            }
            self.stats.handshakes.fetch_add(1, Ordering::Relaxed);
            let id = hop::conn_id(&nm, &ns);
            return Ok(Some(Conn { id, t0: Instant::now(), last_in: h.counter, in_flight: VecDeque::new() }));
        }
    }
}
