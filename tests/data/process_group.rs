//! Groups of processes meeting at rank 0 over the loopback address: the meeting itself (rank
//! 0's bytes reach every rank), what each launcher's environment gives, and the errors for a
//! rank that never comes, a group that disagrees on its size and a rank 0 that is not there.
//! On a machine with CUDA devices, one process per device joins an NCCL communicator from a
//! torchrun-like environment and combines arrays.
//!
//! Each other rank is this test binary again, running [`one_rank`] (ignored when run as a
//! test of its own) with its part in the environment; it prints one `RESULT` line, which the
//! test reads.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use std::sync::Arc;

use emberfire::collective::{Communicator, ProcessGroup, ReduceOp};
use emberfire::*;

/// What a child process does, as `mode;rank;world;port;timeout_ms`.
const PART: &str = "EMBERFIRE_TEST_GROUP_PART";

/// The bytes rank 0 shares in these tests.
const SHARED: &[u8] = b"rank zero's unique bytes";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn group(rank: usize, world: usize, port: u16, ms: u64) -> ProcessGroup {
    ProcessGroup::new(rank, world, "127.0.0.1", port)
        .unwrap()
        .with_timeout(Duration::from_millis(ms))
}

/// Starts this binary as one rank: `mode` is `share` (the group from `ProcessGroup::new`),
/// `env` (from the launcher variables `vars`) or `join` (a communicator from `vars`).
fn spawn(
    mode: &str,
    rank: usize,
    world: usize,
    port: u16,
    ms: u64,
    vars: &[(&str, String)],
) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "process_group::one_rank", "--include-ignored", "--nocapture"])
        .env(PART, format!("{mode};{rank};{world};{port};{ms}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// The child's `RESULT` line: `Ok(what it received)` or `Err(its error's text)`.
fn result(child: Child) -> Result<String, String> {
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child failed: {text}");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("the child printed no result: {text}"));
    match line.split_once(' ') {
        Some(("ok", v)) => Ok(v.to_owned()),
        Some(("err", m)) => Err(m.to_owned()),
        _ => panic!("malformed result line {line:?}"),
    }
}

fn text_of(r: emberfire::error::Result<Vec<u8>>) -> String {
    match r {
        Err(Error::Collective(m)) => m,
        other => panic!("expected Error::Collective, got {other:?}"),
    }
}

#[test]
fn rank_zeros_bytes_reach_every_process_of_the_group() {
    let port = free_port();
    let children: Vec<Child> = (1..4).map(|r| spawn("share", r, 4, port, 20_000, &[])).collect();
    let mine = group(0, 4, port, 20_000).share(SHARED).unwrap();
    assert_eq!(mine, SHARED);
    for (i, c) in children.into_iter().enumerate() {
        assert_eq!(result(c), Ok(String::from_utf8_lossy(SHARED).into_owned()), "rank {}", i + 1);
    }
}

#[test]
fn a_rank_that_never_comes_is_an_error_on_every_rank_that_did() {
    let port = free_port();
    let child = spawn("share", 1, 3, port, 1_500, &[]);
    let m = text_of(group(0, 3, port, 1_500).share(SHARED));
    assert!(m.contains("[2]") && m.contains("did not arrive"), "{m}");
    let m = result(child).unwrap_err();
    assert!(m.contains("[2]") && m.contains("did not arrive"), "{m}");
}

#[test]
fn processes_that_disagree_on_the_group_size_are_told_so() {
    let port = free_port();
    let child = spawn("share", 1, 3, port, 10_000, &[]);
    let m = text_of(group(0, 2, port, 10_000).share(SHARED));
    assert!(m.contains("3 ranks") && m.contains("rank 0 says 2"), "{m}");
    let m = result(child).unwrap_err();
    assert!(m.contains("3 ranks") && m.contains("rank 0 says 2"), "{m}");
}

#[test]
fn a_rank_without_rank_zero_gives_up_at_the_timeout() {
    let port = free_port();
    let started = std::time::Instant::now();
    let m = result(spawn("share", 1, 2, port, 600, &[])).unwrap_err();
    assert!(m.contains("could not reach rank 0") && m.contains(&port.to_string()), "{m}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_port_in_use_is_named_by_rank_zero() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let m = text_of(group(0, 2, port, 2_000).share(SHARED));
    assert!(m.contains("cannot listen") && m.contains(&port.to_string()), "{m}");
    drop(held);
}

/// The variables each launcher sets for rank `rank` of `world` on one machine.
fn launcher_vars(
    launcher: &str,
    rank: usize,
    world: usize,
    port: u16,
) -> Vec<(&'static str, String)> {
    let s = |v: usize| v.to_string();
    match launcher {
        "torchrun" => vec![
            ("RANK", s(rank)),
            ("WORLD_SIZE", s(world)),
            ("LOCAL_RANK", s(rank)),
            ("LOCAL_WORLD_SIZE", s(world)),
            ("MASTER_ADDR", "127.0.0.1".into()),
            ("MASTER_PORT", s(port as usize)),
        ],
        "mpirun" => vec![
            ("OMPI_COMM_WORLD_RANK", s(rank)),
            ("OMPI_COMM_WORLD_SIZE", s(world)),
            ("OMPI_COMM_WORLD_LOCAL_RANK", s(rank)),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", s(world)),
            ("MASTER_PORT", s(port as usize)),
        ],
        "srun" => vec![
            ("SLURM_PROCID", s(rank)),
            ("SLURM_NTASKS", s(world)),
            ("SLURM_LOCALID", s(rank)),
            ("SLURM_NNODES", "1".into()),
            ("SLURM_JOB_NODELIST", "localhost".into()),
            ("MASTER_PORT", s(port as usize)),
        ],
        _ => unreachable!(),
    }
}

#[test]
fn every_launchers_environment_forms_a_group() {
    for launcher in ["torchrun", "mpirun", "srun"] {
        let port = free_port();
        let children: Vec<Child> = (0..3)
            .map(|r| spawn("env", r, 3, port, 20_000, &launcher_vars(launcher, r, 3, port)))
            .collect();
        for (r, c) in children.into_iter().enumerate() {
            let got = result(c).unwrap_or_else(|e| panic!("{launcher}, rank {r}: {e}"));
            assert_eq!(got, format!("rank {r} of 3 received {}", String::from_utf8_lossy(SHARED)));
        }
    }
}

#[test]
fn a_group_of_processes_joins_a_communicator_and_combines_arrays() {
    if get_active_backend() == Backend::CPU {
        // One process is the CPU's one-rank communicator; several need NCCL.
        let one = Communicator::join(&group(0, 1, free_port(), 1_000)).unwrap();
        assert_eq!((one.world_size(), one.ranks()), (1, vec![0]));
        match Communicator::join(&group(0, 2, free_port(), 1_000)) {
            Err(Error::BackendUnavailable(m)) => assert!(m.contains("CUDA backend"), "{m}"),
            other => panic!("expected BackendUnavailable, got {other:?}"),
        }
        let comm = Arc::new(one);
        sharded_across_processes(comm.clone(), 0, 1).unwrap();
        let m = match ShardedArray::from_process_shard(Array::new(&[1.0f32], dim4!(1)), 4, &comm) {
            Err(Error::Collective(m)) => m,
            other => panic!("expected a collective error, got {other:?}"),
        };
        assert!(m.contains("`dim` is 4"), "{m}");
        let m = match Communicator::join(&group(0, 1, 1, 1_000).with_local_rank(1)) {
            Err(Error::Collective(m)) => m,
            other => panic!("expected a collective error, got {other:?}"),
        };
        assert!(m.contains("local rank is 1"), "{m}");
        return;
    }
    let world = device_count() as usize;
    let port = free_port();
    let children: Vec<Child> = (0..world)
        .map(|r| spawn("join", r, world, port, 60_000, &launcher_vars("torchrun", r, world, port)))
        .collect();
    for (r, c) in children.into_iter().enumerate() {
        let got = result(c).unwrap_or_else(|e| panic!("rank {r}: {e}"));
        assert_eq!(
            got,
            format!("rank {r} of {world} on device {r}: all-reduce and all-to-all checked")
        );
    }
}

/// Rank `r`'s shard of the sharded test array: `r + 1` rows of 3 columns (uneven shards), row
/// `i` of the whole holding `i * 0.5 + column`.
fn shard_rows(r: usize) -> (usize, usize) {
    let start: usize = (0..r).map(|q| q + 1).sum();
    (start, r + 1)
}

fn whole_value(i: usize, c: usize) -> f64 {
    i as f64 * 0.5 + c as f64
}

/// A sharded array with one shard in each process of `comm`'s group: element-wise work, sums,
/// means and maxima along and across the split, and the gathered whole, against the host.
fn sharded_across_processes(
    comm: Arc<Communicator>,
    rank: usize,
    world: usize,
) -> emberfire::error::Result<()> {
    let rows: usize = (0..world).map(|r| r + 1).sum();
    let (start, len) = shard_rows(rank);
    let mine: Vec<f64> =
        (0..3).flat_map(|c| (start..start + len).map(move |i| whole_value(i, c))).collect();
    let x = ShardedArray::from_process_shard(Array::new(&mine, dim4!(len as u64, 3)), 0, &comm)?;
    assert_eq!(x.dims(), dim4!(rows as u64, 3));
    let y: ShardedArray<f64> = &(&x * 2.0f64) + 1.0f64;
    let col = |c: usize| (0..rows).map(move |i| whole_value(i, c) * 2.0 + 1.0);
    let sums: Vec<f64> = (0..3).map(|c| col(c).sum()).collect();
    let means: Vec<f64> = sums.iter().map(|s| s / rows as f64).collect();
    let maxima: Vec<f64> = (0..3).map(|c| col(c).fold(f64::MIN, f64::max)).collect();
    let near = |got: Vec<f64>, want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{what}: {g} vs {w}");
        }
    };
    near(y.sum(0).to_vec(), &sums, "sum along the split");
    near(y.mean(0).to_vec(), &means, "mean along the split");
    near(y.max(0).to_vec(), &maxima, "max along the split");
    let row_sums: Vec<f64> =
        (start..start + len).map(|i| (0..3).map(|c| whole_value(i, c) * 2.0 + 1.0).sum()).collect();
    near(y.sum(1).shards()[0].to_vec(), &row_sums, "sum across the split, this shard");
    let whole: Vec<f64> = (0..3).flat_map(col).collect();
    near(y.to_vec(), &whole, "the gathered whole");
    Ok(())
}

/// `rank`'s values in the join test: an f32 vector of `2 * world` elements.
fn join_values(rank: usize, world: usize) -> Vec<f32> {
    (0..2 * world).map(|i| (rank * 100 + i) as f32).collect()
}

/// One rank of the tests above, in a process of its own; does nothing when run directly.
#[test]
#[ignore = "one rank of the process-group tests, which run it in processes of their own"]
fn one_rank() {
    let Ok(part) = std::env::var(PART) else { return };
    let f: Vec<&str> = part.split(';').collect();
    let (rank, world, port, ms): (usize, usize, u16, u64) = (
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
        f[3].parse().unwrap(),
        f[4].parse().unwrap(),
    );
    let outcome: std::result::Result<String, Error> = match f[0] {
        "share" => group(rank, world, port, ms)
            .share(SHARED)
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
        "env" => ProcessGroup::from_env().and_then(|pg| {
            let pg = pg.with_timeout(Duration::from_millis(ms));
            let mine = if pg.rank() == 0 { SHARED } else { b"not read" };
            pg.share(mine).map(|b| {
                format!(
                    "rank {} of {} received {}",
                    pg.rank(),
                    pg.world_size(),
                    String::from_utf8_lossy(&b)
                )
            })
        }),
        "join" => Communicator::from_env().and_then(|comm| {
            let device = get_device();
            let x = Array::new(&join_values(rank, world), dim4!(2 * world as u64));
            let sum = comm.all_reduce(std::slice::from_ref(&x), ReduceOp::Sum)?[0].to_vec();
            let want: Vec<f32> = (0..2 * world)
                .map(|i| (0..world).map(|r| join_values(r, world)[i]).sum())
                .collect();
            assert_eq!(sum, want, "all-reduce");
            let swapped = comm.all_to_all(&[x])?[0].to_vec();
            let want: Vec<f32> = (0..world)
                .flat_map(|s| join_values(s, world)[2 * rank..2 * rank + 2].to_vec())
                .collect();
            assert_eq!(swapped, want, "all-to-all");
            comm.barrier()?;
            sharded_across_processes(Arc::new(comm), rank, world)?;
            Ok(format!(
                "rank {rank} of {world} on device {device}: all-reduce and all-to-all checked"
            ))
        }),
        other => panic!("unknown part {other:?}"),
    };
    match outcome {
        Ok(v) => println!("RESULT ok {v}"),
        Err(e) => println!("RESULT err {}", e.to_string().replace('\n', " ")),
    }
}
