//! UDP datagrams on loopback: no retransmission, loss is counted.
use std::net::UdpSocket;

/// Ask for a receive buffer of `bytes` (the kernel may give less).
pub(crate) fn set_rcvbuf(sock: &UdpSocket, bytes: i32) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt on our own socket with a pointer to a live i32. Failure only means a
    // smaller buffer (more loss under overload, counted).
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &bytes as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}
