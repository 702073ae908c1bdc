//! The video server: reassembly, the bit-for-bit check per frame number, and the replay state
//! kept current while it runs.

use super::*;

impl Server {
    pub(super) fn slot(&self, n: u32) -> Option<usize> {
        ((n as usize) < self.delivered_ns.len()).then_some(n as usize)
    }

    pub(super) fn mark_lost(&mut self, n: u32, why: LostWhy) {
        if let Some(i) = self.slot(n) {
            self.lost[i] = Some(why);
        }
    }

    pub(super) fn take(&mut self, msg: &[u8]) {
        let mut lost = Vec::new();
        let ev = self.re.push(msg, now_ns(), &mut lost);
        let done = now_ns();
        for (n, why) in lost {
            self.mark_lost(n, why);
        }
        match ev {
            PartEvent::Stored(n) | PartEvent::Ignored(n) => {
                if let Some(i) = self.slot(n) {
                    self.parts_got[i] += 1;
                }
            }
            PartEvent::Complete(f) => {
                if let Some(i) = self.slot(f.number) {
                    self.parts_got[i] += 1;
                    let want = self.clip.frame(i % self.clip.frames);
                    self.mismatch[i] = f.data != want;
                    self.delivered_ns[i] = Some(done);
                }
            }
            PartEvent::Refused(_) => return,
        }
        self.taken.fetch_add(1, Ordering::Release);
    }

    pub(super) fn tick(&mut self) {
        for n in self.re.expire(now_ns()) {
            self.mark_lost(n, LostWhy::Deadline);
        }
        if self.saved_at.elapsed() >= SAVE_EVERY {
            self.save();
        }
    }

    /// Record the highest accepted counter (the first failure is kept and ends the run).
    pub(super) fn save(&mut self) {
        self.saved_at = Instant::now();
        let (Some(st), Some(top)) = (self.replay.as_mut(), self.re.top()) else { return };
        if let Err(e) = st.save(self.re.device(), top) {
            self.save_error.get_or_insert(e);
        }
        if let Some((path, fp)) = &self.marks {
            let up = [((Proto::Video, self.re.device()), top)].into_iter().collect();
            if let Err(e) = crate::gateway::accepted::merge(path, fp, &up) {
                self.save_error.get_or_insert(e);
            }
        }
    }

    /// Take messages until `stop` is set and nothing is waiting, checking deadlines meanwhile.
    pub(super) fn serve(mut self, rx: Receiver<Vec<u8>>, stop: Arc<AtomicBool>) -> Server {
        loop {
            match rx.recv_timeout(Duration::from_millis(10)) {
                Ok(m) => self.take(&m),
                Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Acquire) => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.tick();
        }
        for n in self.re.end() {
            self.mark_lost(n, LostWhy::AtEnd);
        }
        self.save();
        self
    }
}
