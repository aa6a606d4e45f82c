//! Meeting of a group's processes over TCP: every rank connects to rank 0, says who it is,
//! and receives rank 0's bytes (NCCL's unique id, when a communicator is joined).
//!
//! The standard library's sockets are enough: one short exchange per join, so no protocol
//! crate or async runtime earns its place. Every wait has the group's deadline, so a rank that
//! never comes, a group that disagrees on its size or a port held by another program ends in
//! an [`Error::Collective`] on every rank that got that far, never in a hang.
//!
//! The exchange, all integers little-endian:
//!
//! ```text
//! rank r -> rank 0:  MAGIC (8 bytes)  rank (u32)  world size (u32)
//! rank 0 -> rank r:  MAGIC (8 bytes)  status (u8: 0 ok, 1 failed)  length (u32)  bytes
//! ```
//!
//! where the bytes are rank 0's (ok) or its error message (failed).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::process_group::ProcessGroup;
use crate::error::{Error, Result};

/// The first bytes of every message, with the protocol's version in the last two.
const MAGIC: [u8; 8] = *b"EFRDV-01";

/// The most bytes rank 0 may share: far above a unique id, far below harm.
const MAX_SHARED: usize = 1 << 20;

/// How long rank 0 waits for one connected process to say who it is.
const HELLO_WAIT: Duration = Duration::from_secs(5);

fn fail(msg: String) -> Error {
    Error::Collective(msg)
}

/// Rank 0's `bytes`, received by every rank of `pg`'s group (rank 0 gets its own back).
/// Every rank of the group calls this at about the same time; it returns when all have met,
/// or with an error at the group's timeout.
pub(crate) fn share(func: &str, pg: &ProcessGroup, bytes: &[u8]) -> Result<Vec<u8>> {
    if bytes.len() > MAX_SHARED {
        return Err(fail(format!(
            "{func}: {} bytes to share; a group shares at most {MAX_SHARED}",
            bytes.len()
        )));
    }
    if pg.world_size() == 1 {
        return Ok(bytes.to_vec());
    }
    let deadline = Instant::now() + pg.timeout();
    let addrs = resolve(func, pg)?;
    if pg.rank() == 0 {
        serve(func, pg, &addrs, bytes, deadline).map(|()| bytes.to_vec())
    } else {
        join(func, pg, &addrs, deadline)
    }
}

fn place(pg: &ProcessGroup) -> String {
    format!("{}:{}", pg.addr(), pg.port())
}

fn resolve(func: &str, pg: &ProcessGroup) -> Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = (pg.addr(), pg.port())
        .to_socket_addrs()
        .map_err(|e| fail(format!("{func}: rank 0's address {} does not resolve: {e}", place(pg))))?
        .collect();
    if addrs.is_empty() {
        return Err(fail(format!("{func}: rank 0's address {} resolves to nothing", place(pg))));
    }
    Ok(addrs)
}

/// Rank 0's listener: on the loopback address where the group meets there (one machine), else
/// on every interface, as the other ranks may reach this machine by an address its own name
/// does not resolve to here (a host name that resolves to 127.0.1.1 on its own machine, an
/// address behind a NAT).
fn listen(func: &str, pg: &ProcessGroup, addrs: &[SocketAddr]) -> Result<TcpListener> {
    let in_use = |e: std::io::Error| {
        fail(format!(
            "{func}: rank 0 cannot listen on {}: {e}; the port is held by another program or \
             group: choose another with `MASTER_PORT` or `EMBERFIRE_MASTER_PORT`",
            place(pg)
        ))
    };
    let mut last = None;
    if addrs.iter().all(|a| a.ip().is_loopback()) {
        for a in addrs {
            match TcpListener::bind(a) {
                Ok(l) => return Ok(l),
                Err(e) if e.kind() == ErrorKind::AddrInUse => return Err(in_use(e)),
                Err(e) => last = Some(e),
            }
        }
    }
    let any: SocketAddr = if addrs[0].is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, pg.port()).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, pg.port()).into()
    };
    TcpListener::bind(any).map_err(|e| {
        if e.kind() == ErrorKind::AddrInUse {
            in_use(e)
        } else {
            fail(format!(
                "{func}: rank 0 cannot listen on port {} of every interface ({e}){}",
                pg.port(),
                last.map_or_else(String::new, |l| format!(" or on {} ({l})", place(pg)))
            ))
        }
    })
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// Rank 0: waits for every other rank, checks that they agree on the group, and answers each
/// with `bytes`, or every one that came with the error.
fn serve(
    func: &str,
    pg: &ProcessGroup,
    addrs: &[SocketAddr],
    bytes: &[u8],
    deadline: Instant,
) -> Result<()> {
    let listener = listen(func, pg, addrs)?;
    listener
        .set_nonblocking(true)
        .map_err(|e| fail(format!("{func}: rank 0's listener on {}: {e}", place(pg))))?;
    let world = pg.world_size();
    let mut arrived: Vec<Option<TcpStream>> = (0..world).map(|_| None).collect();
    let mut count = 1;
    let mut problem = None;
    while count < world && problem.is_none() {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                if Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) => {
                problem = Some(format!("{func}: rank 0's listener on {}: {e}", place(pg)));
                break;
            }
        };
        // Anything that does not speak the protocol (a port scanner, a stale process) is
        // dropped without a word.
        let Some((rank, their_world, stream)) = hello(stream, deadline) else { continue };
        if their_world != world {
            problem = Some(format!(
                "{func}: rank {rank} says the group has {their_world} ranks, rank 0 says {world}; \
                 every process must be started with the same world size"
            ));
        } else if rank == 0 || rank >= world {
            problem = Some(format!(
                "{func}: a process says it is rank {rank}, which is not a rank of 1..{world} \
                 (rank 0 is {})",
                place(pg)
            ));
        } else if arrived[rank].is_some() {
            problem = Some(format!("{func}: two processes say they are rank {rank}"));
        }
        if problem.is_some() {
            let mut s = stream;
            let _ = answer(&mut s, 1, problem.as_deref().unwrap_or_default().as_bytes());
            continue;
        }
        arrived[rank] = Some(stream);
        count += 1;
    }
    let problem = problem.or_else(|| {
        let missing: Vec<usize> = (1..world).filter(|&r| arrived[r].is_none()).collect();
        (!missing.is_empty()).then(|| {
            format!(
                "{func}: rank(s) {missing:?} of {world} did not arrive at rank 0 ({}) within {:?}",
                place(pg),
                pg.timeout()
            )
        })
    });
    let (status, payload) = match &problem {
        Some(p) => (1, p.as_bytes()),
        None => (0, bytes),
    };
    let mut lost = Vec::new();
    for (rank, s) in arrived.iter_mut().enumerate() {
        if let Some(s) = s {
            if answer(s, status, payload).is_err() {
                lost.push(rank);
            }
        }
    }
    match problem {
        Some(p) => Err(fail(p)),
        None if !lost.is_empty() => {
            Err(fail(format!("{func}: rank(s) {lost:?} left before rank 0 could answer them")))
        }
        None => Ok(()),
    }
}

/// Reads a connected process's greeting: its rank and world size, or `None` for anything that
/// does not greet as the protocol does.
fn hello(mut s: TcpStream, deadline: Instant) -> Option<(usize, usize, TcpStream)> {
    s.set_nonblocking(false).ok()?;
    let wait = remaining(deadline).clamp(Duration::from_millis(50), HELLO_WAIT);
    s.set_read_timeout(Some(wait)).ok()?;
    let mut buf = [0u8; 16];
    s.read_exact(&mut buf).ok()?;
    if buf[..8] != MAGIC {
        return None;
    }
    let rank = u32::from_le_bytes(buf[8..12].try_into().ok()?) as usize;
    let world = u32::from_le_bytes(buf[12..16].try_into().ok()?) as usize;
    Some((rank, world, s))
}

fn answer(s: &mut TcpStream, status: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut msg = Vec::with_capacity(13 + payload.len());
    msg.extend_from_slice(&MAGIC);
    msg.push(status);
    msg.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    msg.extend_from_slice(payload);
    s.set_write_timeout(Some(HELLO_WAIT))?;
    s.write_all(&msg)?;
    s.flush()
}

/// A rank other than 0: connects to rank 0 (again and again until the deadline, since rank 0
/// may start later), greets it and waits for its answer.
fn join(func: &str, pg: &ProcessGroup, addrs: &[SocketAddr], deadline: Instant) -> Result<Vec<u8>> {
    let mut last_error = None;
    let mut stream = None;
    while stream.is_none() {
        for a in addrs {
            let wait = remaining(deadline).min(Duration::from_secs(2));
            if wait.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(a, wait) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last_error = Some(e),
            }
        }
        if stream.is_none() {
            if Instant::now() >= deadline {
                return Err(fail(format!(
                    "{func}: rank {} could not reach rank 0 at {} within {:?}{}",
                    pg.rank(),
                    place(pg),
                    pg.timeout(),
                    last_error.map_or_else(String::new, |e| format!(" (last: {e})"))
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mut s = stream.expect("connected above");
    let io = |e: std::io::Error| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            fail(format!(
                "{func}: rank {} reached rank 0 at {} but had no answer within {:?}: ranks are \
                 missing, or rank 0 is slow to start",
                pg.rank(),
                place(pg),
                pg.timeout()
            ))
        } else {
            fail(format!(
                "{func}: rank {}: the connection to rank 0 at {} failed before rank 0 answered \
                 ({e}); rank 0 may have failed or left",
                pg.rank(),
                place(pg)
            ))
        }
    };
    let _ = s.set_nodelay(true);
    let mut greeting = Vec::with_capacity(16);
    greeting.extend_from_slice(&MAGIC);
    greeting.extend_from_slice(&(pg.rank() as u32).to_le_bytes());
    greeting.extend_from_slice(&(pg.world_size() as u32).to_le_bytes());
    s.set_write_timeout(Some(remaining(deadline).max(Duration::from_millis(1)))).map_err(io)?;
    s.write_all(&greeting).map_err(io)?;
    s.set_read_timeout(Some(remaining(deadline).max(Duration::from_millis(1)))).map_err(io)?;
    let mut head = [0u8; 13];
    s.read_exact(&mut head).map_err(io)?;
    if head[..8] != MAGIC {
        return Err(fail(format!(
            "{func}: what answers at {} is not rank 0 of an emberfire group; another program \
             holds the port: choose another with `MASTER_PORT` or `EMBERFIRE_MASTER_PORT`",
            place(pg)
        )));
    }
    let len = u32::from_le_bytes(head[9..13].try_into().expect("four bytes")) as usize;
    if len > MAX_SHARED {
        return Err(fail(format!("{func}: rank 0 at {} sent a malformed answer", place(pg))));
    }
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).map_err(io)?;
    match head[8] {
        0 => Ok(payload),
        _ => Err(fail(String::from_utf8_lossy(&payload).into_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port nothing listens on now.
    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    fn group(rank: usize, world: usize, port: u16, ms: u64) -> ProcessGroup {
        ProcessGroup::new(rank, world, "127.0.0.1", port)
            .unwrap()
            .with_timeout(Duration::from_millis(ms))
    }

    fn text(r: Result<Vec<u8>>) -> String {
        match r {
            Err(Error::Collective(m)) => m,
            other => panic!("expected a collective error, got {other:?}"),
        }
    }

    #[test]
    fn ranks_in_threads_receive_rank_zeros_bytes() {
        let port = free_port();
        let got: Vec<Vec<u8>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|r| {
                    s.spawn(move || {
                        let mine = if r == 0 { b"the id".to_vec() } else { vec![r as u8] };
                        share("t", &group(r, 4, port, 10_000), &mine).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(got.iter().all(|g| g == b"the id"), "{got:?}");
    }

    #[test]
    fn one_rank_needs_no_socket_and_too_many_bytes_are_refused() {
        assert_eq!(share("t", &group(0, 1, 1, 1), b"x").unwrap(), b"x");
        let big = vec![0u8; MAX_SHARED + 1];
        assert!(text(share("t", &group(0, 1, 1, 1), &big)).contains("at most"));
    }

    #[test]
    fn a_foreign_program_on_the_port_is_named_not_waited_for() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 16];
            let _ = s.read_exact(&mut buf);
            s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").unwrap();
            listener
        });
        let m = text(share("t", &group(1, 2, port, 5_000), b""));
        assert!(m.contains("not rank 0"), "{m}");
        let listener = server.join().unwrap();
        // And rank 0 cannot listen where that program does.
        let m = text(share("t", &group(0, 2, port, 5_000), b""));
        assert!(m.contains("cannot listen") && m.contains("MASTER_PORT"), "{m}");
        drop(listener);
    }
}
