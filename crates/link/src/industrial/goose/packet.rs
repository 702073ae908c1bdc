//! AF_PACKET raw sockets bound to one interface: whole Ethernet frames out and in.
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

const ETH_P_ALL: u16 = 0x0003;

/// A raw packet socket bound to one interface (of the namespace it was opened in).
pub struct PacketSocket {
    fd: OwnedFd,
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl PacketSocket {
    /// Open on `ifname`. `receive`: see every frame of the interface (ETH_P_ALL); otherwise
    /// protocol 0, a send-only socket that queues nothing.
    pub fn open(ifname: &str, receive: bool) -> Result<PacketSocket, String> {
        let name = std::ffi::CString::new(ifname).map_err(|_| format!("interface '{ifname}': NUL in the name"))?;
        // SAFETY: plain syscalls on values we own; the fd is wrapped at once.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(os_err(&format!("interface {ifname}")));
        }
        let proto = if receive { ETH_P_ALL.to_be() } else { 0 };
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto as i32) };
        if raw < 0 {
            return Err(os_err("AF_PACKET socket (needs CAP_NET_RAW)"));
        }
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex as i32;
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r != 0 {
            return Err(os_err(&format!("bind AF_PACKET to {ifname}")));
        }
        Ok(PacketSocket { fd })
    }

    /// Receive waits at most `t` (then `recv` returns None).
    pub fn set_timeout(&self, t: Duration) -> Result<(), String> {
        let tv = libc::timeval { tv_sec: t.as_secs() as _, tv_usec: t.subsec_micros() as _ };
        // SAFETY: setsockopt reads one timeval we own.
        let r = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as u32,
            )
        };
        if r != 0 {
            return Err(os_err("SO_RCVTIMEO"));
        }
        Ok(())
    }

    /// Send one whole frame on the bound interface.
    pub fn send(&self, frame: &[u8]) -> Result<(), String> {
        // SAFETY: send reads `frame` only.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        if n < 0 {
            return Err(os_err(&format!("send of a {}-byte frame", frame.len())));
        }
        if n as usize != frame.len() {
            return Err(format!("send of a {}-byte frame wrote {n} bytes", frame.len()));
        }
        Ok(())
    }

    /// Receive one frame into `buf` (a frame longer than `buf` is cut and flagged by
    /// MSG_TRUNC: its true length is returned); None on timeout.
    pub fn recv(&self, buf: &mut [u8]) -> Result<Option<usize>, String> {
        // SAFETY: recv writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len(), libc::MSG_TRUNC)
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted => {
                    Ok(None)
                }
                _ => Err(format!("AF_PACKET recv: {e}")),
            };
        }
        Ok(Some(n as usize))
    }
}
