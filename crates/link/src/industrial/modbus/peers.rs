//! The built-in Modbus/TCP master and slave (the `tokio-modbus` crate), for the measurement and
//! the tests: a slave with 65,536 holding registers, and the poll cycles the measurement times.
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_modbus::prelude::*;
use tokio_modbus::server::tcp::{accept_tcp_connection, Server};

/// A user-defined function code (Modbus Application Protocol v1.1b3 §5: 65–72 are for the user):
/// the slave answers with the request's data unchanged, so request and response are equal in size.
pub const ECHO_FUNCTION: u8 = 65;

/// The slave's holding registers, shared with whoever checks them.
#[derive(Clone)]
pub struct Registers(pub Arc<Mutex<Vec<u16>>>);

impl Registers {
    /// 65,536 registers, register i holding `i * 7 + 3` (mod 2^16): every read has a known answer.
    pub fn patterned() -> Registers {
        Registers(Arc::new(Mutex::new((0..=u16::MAX).map(|i| i.wrapping_mul(7).wrapping_add(3)).collect())))
    }
}

struct Slave {
    regs: Registers,
}

impl tokio_modbus::server::Service for Slave {
    type Request = Request<'static>;
    type Response = Response;
    type Exception = ExceptionCode;
    type Future = std::future::Ready<Result<Response, ExceptionCode>>;

    fn call(&self, req: Request<'static>) -> Self::Future {
        let mut regs = self.regs.0.lock().unwrap_or_else(|e| e.into_inner());
        let range = |addr: u16, n: usize| {
            let a = addr as usize;
            (n > 0 && a + n <= regs.len()).then_some(a..a + n).ok_or(ExceptionCode::IllegalDataAddress)
        };
        let r = match req {
            Request::ReadHoldingRegisters(addr, n) if n <= 125 => {
                range(addr, n as usize).map(|r| Response::ReadHoldingRegisters(regs[r].to_vec()))
            }
            Request::WriteSingleRegister(addr, v) => {
                regs[addr as usize] = v;
                Ok(Response::WriteSingleRegister(addr, v))
            }
            Request::WriteMultipleRegisters(addr, words) if words.len() <= 123 => range(addr, words.len()).map(|r| {
                regs[r].copy_from_slice(&words);
                Response::WriteMultipleRegisters(addr, words.len() as u16)
            }),
            Request::Custom(ECHO_FUNCTION, data) => {
                Ok(Response::Custom(ECHO_FUNCTION, bytes::Bytes::from(data.into_owned())))
            }
            Request::ReadHoldingRegisters(..) | Request::WriteMultipleRegisters(..) => {
                Err(ExceptionCode::IllegalDataValue)
            }
            _ => Err(ExceptionCode::IllegalFunction),
        };
        std::future::ready(r)
    }
}

/// Serve `regs` on `listener` until `stop` completes.
pub async fn serve_slave(
    listener: TcpListener,
    regs: Registers,
    stop: impl std::future::Future<Output = ()> + Send + Sync + Unpin + 'static,
) -> Result<(), String> {
    let service = Arc::new(Slave { regs });
    let on_connected = move |stream: TcpStream, addr: SocketAddr| {
        let service = service.clone();
        let _ = stream.set_nodelay(true);
        async move { accept_tcp_connection(stream, addr, |_| Ok(Some(service.clone()))) }
    };
    Server::new(listener)
        .serve_until(&on_connected, |e| eprintln!("modbus slave: {e}"), stop)
        .await
        .map(|_| ())
        .map_err(|e| format!("modbus slave: {e}"))
}

/// A master connection (TCP_NODELAY: a poll is one small write).
pub async fn connect_master(addr: SocketAddr) -> Result<client::Context, String> {
    let s = TcpStream::connect(addr).await.map_err(|e| format!("modbus master: cannot connect to {addr}: {e}"))?;
    let _ = s.set_nodelay(true);
    Ok(tcp::attach(s))
}

/// One poll cycle the measurement times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cycle {
    /// Function 3 (read holding registers) of `n` registers from address 0: a 12-byte request
    /// and a 9 + 2n byte response.
    ReadHolding(u16),
    /// [`ECHO_FUNCTION`] with `n` data bytes: request and response of 8 + n bytes each.
    Echo(usize),
}

impl Cycle {
    /// (request, response) ADU bytes on the wire.
    pub fn adu_bytes(&self) -> (usize, usize) {
        match self {
            Cycle::ReadHolding(n) => (12, 9 + 2 * *n as usize),
            Cycle::Echo(n) => (8 + n, 8 + n),
        }
    }

    /// The cycle as run.json and the tables name it.
    pub fn describe(&self) -> String {
        let (q, r) = self.adu_bytes();
        match self {
            Cycle::ReadHolding(n) => {
                format!("read {n} holding register{} (function 3): {q} B request, {r} B response", plural(*n as usize))
            }
            Cycle::Echo(n) => {
                format!("user-defined function {ECHO_FUNCTION} echo of {n} B: {q} B request, {r} B response")
            }
        }
    }

    /// Run the cycle once and check the answer against `regs` (what the slave holds).
    pub async fn poll(&self, ctx: &mut client::Context, timeout: Duration, expect: &[u16]) -> Result<(), String> {
        match self {
            Cycle::ReadHolding(n) => {
                let got = tokio::time::timeout(timeout, ctx.read_holding_registers(0, *n))
                    .await
                    .map_err(|_| format!("no answer within {timeout:?}"))?
                    .map_err(|e| format!("modbus: {e}"))?
                    .map_err(|e| format!("modbus exception: {e}"))?;
                if got != expect[..*n as usize] {
                    return Err("the registers read differ from the slave's".into());
                }
            }
            Cycle::Echo(n) => {
                let data: Vec<u8> = (0..*n).map(|i| i as u8).collect();
                let got = tokio::time::timeout(timeout, ctx.call(Request::Custom(ECHO_FUNCTION, Cow::Borrowed(&data))))
                    .await
                    .map_err(|_| format!("no answer within {timeout:?}"))?
                    .map_err(|e| format!("modbus: {e}"))?
                    .map_err(|e| format!("modbus exception: {e}"))?;
                if got != Response::Custom(ECHO_FUNCTION, bytes::Bytes::from(data)) {
                    return Err("the echo differs from what was sent".into());
                }
            }
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
