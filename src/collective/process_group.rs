//! Who this process is in a group of processes: its rank, the group's size, its rank on its
//! machine, and where rank 0 waits for the others. Read from the environment a launcher sets
//! (torchrun, Open MPI's `mpirun`, SLURM's `srun`) or given explicitly.
//!
//! The parsing takes the environment as a lookup function, so that every launcher's variables
//! are tested without changing the test process's own environment.

use std::time::Duration;

use crate::error::{Error, Result};

/// The port rank 0 listens on when the launcher names none: torchrun's default.
pub const DEFAULT_PORT: u16 = 29500;

/// How long joining a group waits for the other ranks when nothing else is asked for.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Which launcher's environment a [`ProcessGroup`] was read from.
///
/// ```
/// use emberfire::collective::{Launcher, ProcessGroup};
/// let pg = ProcessGroup::new(0, 1, "127.0.0.1", 29500).unwrap();
/// assert_eq!(pg.launcher(), Launcher::Explicit);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Launcher {
    /// torchrun (and anything that sets `RANK` and `WORLD_SIZE` as it does).
    Torchrun,
    /// Open MPI's `mpirun` (`OMPI_COMM_WORLD_*`).
    OpenMpi,
    /// SLURM's `srun` (`SLURM_PROCID`, `SLURM_NTASKS`).
    Slurm,
    /// Made by [`ProcessGroup::new`].
    Explicit,
}

/// One process's place in a group of processes, one process per GPU: the group's size, this
/// process's rank in it and on its machine, the address and port where rank 0 meets the
/// others, and how long joining waits. [`Communicator::join`](super::Communicator::join)
/// makes a communicator of it.
///
/// [`ProcessGroup::from_env`] reads it from the launcher's environment, in this order:
///
/// | launcher | rank | size | local rank | rank 0's address |
/// | --- | --- | --- | --- | --- |
/// | torchrun | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` | `MASTER_ADDR`, `MASTER_PORT` |
/// | Open MPI | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` | `MASTER_ADDR`, `MASTER_PORT`; on one machine the loopback address |
/// | SLURM | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_LOCALID` | `MASTER_ADDR`, `MASTER_PORT`; on one node the loopback address, else the step's first node (`SLURM_STEP_NODELIST`, `SLURM_JOB_NODELIST`) |
///
/// The port defaults to 29500. `EMBERFIRE_MASTER_ADDR` and `EMBERFIRE_MASTER_PORT` take
/// precedence over every launcher's variables; `EMBERFIRE_COLLECTIVE_TIMEOUT` (seconds) sets
/// the timeout. torchrun's agent keeps a store of its own on `MASTER_PORT` (it says so with
/// `TORCHELASTIC_USE_AGENT_STORE=True`); there rank 0 listens on the port after it.
///
/// ```
/// use emberfire::collective::{Launcher, ProcessGroup};
/// let vars = [("RANK", "1"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "1"),
///             ("MASTER_ADDR", "node0"), ("MASTER_PORT", "29400")];
/// let pg = ProcessGroup::from_vars(vars).unwrap();
/// assert_eq!((pg.rank(), pg.world_size(), pg.local_rank()), (1, 4, 1));
/// assert_eq!((pg.addr(), pg.port(), pg.launcher()), ("node0", 29400, Launcher::Torchrun));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessGroup {
    rank: usize,
    world_size: usize,
    local_rank: usize,
    addr: String,
    port: u16,
    timeout: Duration,
    launcher: Launcher,
}

impl ProcessGroup {
    /// Rank `rank` of `world_size` processes whose rank 0 listens on `addr:port`; the local
    /// rank is the rank (one machine) until [`ProcessGroup::with_local_rank`] says otherwise.
    /// An error if the group is empty or `rank` is not below `world_size`.
    ///
    /// ```
    /// use emberfire::collective::ProcessGroup;
    /// let pg = ProcessGroup::new(2, 3, "127.0.0.1", 29500).unwrap();
    /// assert_eq!((pg.rank(), pg.local_rank()), (2, 2));
    /// assert!(ProcessGroup::new(3, 3, "127.0.0.1", 29500).is_err());
    /// ```
    pub fn new(
        rank: usize,
        world_size: usize,
        addr: impl Into<String>,
        port: u16,
    ) -> Result<ProcessGroup> {
        let addr = addr.into();
        check_place("ProcessGroup::new", rank, world_size)?;
        if addr.is_empty() {
            return Err(Error::Collective("ProcessGroup::new: `addr` is empty".into()));
        }
        Ok(ProcessGroup {
            rank,
            world_size,
            local_rank: rank,
            addr,
            port,
            timeout: DEFAULT_TIMEOUT,
            launcher: Launcher::Explicit,
        })
    }

    /// This process's place as its launcher's environment gives it (see the [type
    /// documentation](ProcessGroup) for the variables); an error naming the variable where one
    /// is missing or not a number, or where no launcher's variables are set.
    ///
    /// ```no_run
    /// // Under `torchrun --nproc-per-node 2 ...`, `mpirun -n 2 ...` or `srun -n 2 ...`:
    /// let pg = emberfire::collective::ProcessGroup::from_env().unwrap();
    /// println!("rank {} of {}", pg.rank(), pg.world_size());
    /// ```
    pub fn from_env() -> Result<ProcessGroup> {
        parse(&|name| std::env::var(name).ok())
    }

    /// As [`ProcessGroup::from_env`], from the given variables instead of the process's
    /// environment.
    ///
    /// ```
    /// use emberfire::collective::{Launcher, ProcessGroup};
    /// let vars = [("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2"),
    ///             ("OMPI_COMM_WORLD_LOCAL_RANK", "0"), ("OMPI_COMM_WORLD_LOCAL_SIZE", "2")];
    /// let pg = ProcessGroup::from_vars(vars).unwrap();
    /// assert_eq!((pg.addr(), pg.port(), pg.launcher()), ("127.0.0.1", 29500, Launcher::OpenMpi));
    /// ```
    pub fn from_vars<K: AsRef<str>, V: AsRef<str>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<ProcessGroup> {
        let vars: Vec<(String, String)> =
            vars.into_iter().map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned())).collect();
        parse(&|name| vars.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    /// The same place with `local_rank` as the rank on this machine, which picks the device.
    ///
    /// ```
    /// use emberfire::collective::ProcessGroup;
    /// let pg = ProcessGroup::new(5, 8, "node0", 29500).unwrap().with_local_rank(1);
    /// assert_eq!(pg.local_rank(), 1);
    /// ```
    pub fn with_local_rank(mut self, local_rank: usize) -> ProcessGroup {
        self.local_rank = local_rank;
        self
    }

    /// The same place, waiting at most `timeout` for the other ranks when joining.
    ///
    /// ```
    /// use emberfire::collective::ProcessGroup;
    /// use std::time::Duration;
    /// let pg = ProcessGroup::new(0, 2, "127.0.0.1", 29500).unwrap()
    ///     .with_timeout(Duration::from_secs(5));
    /// assert_eq!(pg.timeout(), Duration::from_secs(5));
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> ProcessGroup {
        self.timeout = timeout;
        self
    }

    /// This process's rank, `0..world_size()`.
    ///
    /// ```
    /// # use emberfire::collective::ProcessGroup;
    /// assert_eq!(ProcessGroup::new(1, 2, "h", 1).unwrap().rank(), 1);
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many processes the group has.
    ///
    /// ```
    /// # use emberfire::collective::ProcessGroup;
    /// assert_eq!(ProcessGroup::new(1, 2, "h", 1).unwrap().world_size(), 2);
    /// ```
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// This process's rank among the group's processes on its machine: the device it takes.
    ///
    /// ```
    /// # use emberfire::collective::ProcessGroup;
    /// assert_eq!(ProcessGroup::new(1, 2, "h", 1).unwrap().local_rank(), 1);
    /// ```
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// The host name or address where rank 0 listens.
    ///
    /// ```
    /// # use emberfire::collective::ProcessGroup;
    /// assert_eq!(ProcessGroup::new(1, 2, "node7", 1).unwrap().addr(), "node7");
    /// ```
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The port where rank 0 listens.
    ///
    /// ```
    /// # use emberfire::collective::ProcessGroup;
    /// assert_eq!(ProcessGroup::new(1, 2, "h", 4242).unwrap().port(), 4242);
    /// ```
    pub fn port(&self) -> u16 {
        self.port
    }

    /// How long joining waits for the other ranks.
    ///
    /// ```
    /// # use emberfire::collective::{ProcessGroup, DEFAULT_TIMEOUT};
    /// assert_eq!(ProcessGroup::new(1, 2, "h", 1).unwrap().timeout(), DEFAULT_TIMEOUT);
    /// ```
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Rank 0's `bytes`, received by every process of the group (rank 0 gets its own back;
    /// the others' `bytes` are not read): the meeting [`Communicator::join`] holds to hand
    /// out NCCL's unique id, open for anything else a group must agree on before it starts
    /// (a seed, a run's name), at most 1 MiB. Every process calls it at about the same time;
    /// an [`Error::Collective`] on every rank that came where a rank does not come within the
    /// timeout, the processes disagree on the group's size, or the port is held by another
    /// program.
    ///
    /// [`Communicator::join`]: super::Communicator::join
    ///
    /// ```
    /// use emberfire::collective::ProcessGroup;
    /// let pg = ProcessGroup::new(0, 1, "127.0.0.1", 29500).unwrap();
    /// assert_eq!(pg.share(b"seed 42").unwrap(), b"seed 42"); // one process: no socket
    /// ```
    pub fn share(&self, bytes: &[u8]) -> Result<Vec<u8>> {
        super::rendezvous::share("ProcessGroup::share", self, bytes)
    }

    /// Which launcher's environment this place was read from.
    ///
    /// ```
    /// # use emberfire::collective::{Launcher, ProcessGroup};
    /// let pg = ProcessGroup::from_vars([("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")]).unwrap();
    /// assert_eq!(pg.launcher(), Launcher::Slurm);
    /// ```
    pub fn launcher(&self) -> Launcher {
        self.launcher
    }
}

fn check_place(func: &str, rank: usize, world_size: usize) -> Result<()> {
    if world_size == 0 {
        return Err(Error::Collective(format!("{func}: the group's size is 0")));
    }
    if rank >= world_size {
        return Err(Error::Collective(format!(
            "{func}: rank {rank} is not below the group's size {world_size}"
        )));
    }
    Ok(())
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The value of `name` as a number, `None` where it is unset; an error naming it where it is
/// set but not a number.
fn number<N: std::str::FromStr>(env: Lookup, name: &str) -> Result<Option<N>> {
    match env(name) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            Error::Collective(format!("ProcessGroup::from_env: `{name}` is {v:?}, not a number"))
        }),
    }
}

fn required<N: std::str::FromStr>(env: Lookup, name: &str, launcher: &str) -> Result<N> {
    number(env, name)?.ok_or_else(|| {
        Error::Collective(format!(
            "ProcessGroup::from_env: {launcher}'s environment is incomplete: `{name}` is not set"
        ))
    })
}

const LOOPBACK: &str = "127.0.0.1";

fn parse(env: Lookup) -> Result<ProcessGroup> {
    const F: &str = "ProcessGroup::from_env";
    let master_addr = env("EMBERFIRE_MASTER_ADDR").or_else(|| env("MASTER_ADDR"));
    let (launcher, rank, world_size, local_rank, addr, torch_store) =
        if env("RANK").is_some() || env("WORLD_SIZE").is_some() {
            let rank = required(env, "RANK", "torchrun")?;
            let world = required(env, "WORLD_SIZE", "torchrun")?;
            let local = number(env, "LOCAL_RANK")?.unwrap_or(rank);
            let store = env("TORCHELASTIC_USE_AGENT_STORE")
                .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
            let addr = master_addr.unwrap_or_else(|| LOOPBACK.into());
            (Launcher::Torchrun, rank, world, local, addr, store)
        } else if env("OMPI_COMM_WORLD_RANK").is_some() {
            let rank = required(env, "OMPI_COMM_WORLD_RANK", "Open MPI")?;
            let world: usize = required(env, "OMPI_COMM_WORLD_SIZE", "Open MPI")?;
            let local = number(env, "OMPI_COMM_WORLD_LOCAL_RANK")?.unwrap_or(rank);
            let local_size: Option<usize> = number(env, "OMPI_COMM_WORLD_LOCAL_SIZE")?;
            let addr = match master_addr {
                Some(a) => a,
                None if world == 1 || local_size == Some(world) => LOOPBACK.into(),
                None => {
                    return Err(Error::Collective(format!(
                        "{F}: the Open MPI job spans machines ({world} ranks, {} on this one); \
                         set `MASTER_ADDR` to rank 0's host name, for example with `mpirun -x \
                         MASTER_ADDR=...`",
                        local_size.map_or("an unknown number".into(), |n| n.to_string())
                    )))
                }
            };
            (Launcher::OpenMpi, rank, world, local, addr, false)
        } else if env("SLURM_PROCID").is_some() {
            let rank = required(env, "SLURM_PROCID", "SLURM")?;
            let world = required(env, "SLURM_NTASKS", "SLURM")?;
            let local = number(env, "SLURM_LOCALID")?.unwrap_or(rank);
            let nodes: Option<usize> =
                number(env, "SLURM_STEP_NUM_NODES")?.or(number(env, "SLURM_NNODES")?);
            let addr = match master_addr {
                Some(a) => a,
                None if world == 1 || nodes == Some(1) => LOOPBACK.into(),
                None => {
                    let list = ["SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"]
                        .iter()
                        .find_map(|v| env(v));
                    match list.as_deref().and_then(first_host) {
                        Some(h) => h,
                        None => {
                            return Err(Error::Collective(format!(
                                "{F}: SLURM names no node list to find rank 0's node in; set \
                                 `MASTER_ADDR` to rank 0's host name"
                            )))
                        }
                    }
                }
            };
            (Launcher::Slurm, rank, world, local, addr, false)
        } else {
            return Err(Error::Collective(format!(
                "{F}: no launcher's environment: run under torchrun (`RANK`, `WORLD_SIZE`), \
                 mpirun (`OMPI_COMM_WORLD_RANK`) or srun (`SLURM_PROCID`), or make the group \
                 with `ProcessGroup::new`"
            )));
        };
    check_place(F, rank, world_size)?;
    let port = match number::<u16>(env, "EMBERFIRE_MASTER_PORT")? {
        Some(p) => p,
        None => {
            let p = number::<u16>(env, "MASTER_PORT")?.unwrap_or(DEFAULT_PORT);
            if torch_store {
                p.checked_add(1).ok_or_else(|| {
                    Error::Collective(format!(
                        "{F}: `MASTER_PORT` is 65535, held by torchrun's store, and no port \
                         follows it; set `EMBERFIRE_MASTER_PORT`"
                    ))
                })?
            } else {
                p
            }
        }
    };
    let timeout = match env("EMBERFIRE_COLLECTIVE_TIMEOUT") {
        None => DEFAULT_TIMEOUT,
        Some(v) => match v.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s),
            _ => {
                return Err(Error::Collective(format!(
                    "{F}: `EMBERFIRE_COLLECTIVE_TIMEOUT` is {v:?}, not a positive number of \
                     seconds"
                )))
            }
        },
    };
    Ok(ProcessGroup { rank, world_size, local_rank, addr, port, timeout, launcher })
}

/// The first host of a SLURM host list: `gpu[03-05,9],cpu1` gives `gpu03`, `node7,node8`
/// gives `node7`.
fn first_host(list: &str) -> Option<String> {
    let list = list.trim();
    // The first entry ends at the first comma outside brackets.
    let mut depth = 0usize;
    let end = list
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => return true,
                _ => {}
            }
            false
        })
        .map_or(list.len(), |(i, _)| i);
    let entry = &list[..end];
    let host = match entry.find('[') {
        None => entry.to_owned(),
        Some(open) => {
            let close = open + entry[open..].find(']')?;
            let inside = &entry[open + 1..close];
            let first = inside.split(',').next()?.split('-').next()?;
            format!("{}{}{}", &entry[..open], first, &entry[close + 1..])
        }
    };
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<ProcessGroup> {
        ProcessGroup::from_vars(vars.iter().copied())
    }

    fn message(r: Result<ProcessGroup>) -> String {
        match r {
            Err(Error::Collective(m)) => m,
            other => panic!("expected a collective error, got {other:?}"),
        }
    }

    #[test]
    fn torchrun_gives_every_part_and_its_agent_store_moves_the_port() {
        let base = [
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "10.0.0.5"),
            ("MASTER_PORT", "29400"),
        ];
        let pg = from(&base).unwrap();
        assert_eq!((pg.rank, pg.world_size, pg.local_rank), (3, 8, 1));
        assert_eq!(
            (pg.addr.as_str(), pg.port, pg.launcher),
            ("10.0.0.5", 29400, Launcher::Torchrun)
        );
        assert_eq!(pg.timeout, DEFAULT_TIMEOUT);
        let mut with_store = base.to_vec();
        with_store.push(("TORCHELASTIC_USE_AGENT_STORE", "True"));
        assert_eq!(from(&with_store).unwrap().port, 29401);
        with_store.push(("EMBERFIRE_MASTER_PORT", "31000"));
        with_store.push(("EMBERFIRE_MASTER_ADDR", "head"));
        let pg = from(&with_store).unwrap();
        assert_eq!((pg.addr.as_str(), pg.port), ("head", 31000));
        // Without MASTER_* the loopback address and torchrun's default port.
        let pg = from(&[("RANK", "0"), ("WORLD_SIZE", "1")]).unwrap();
        assert_eq!((pg.addr.as_str(), pg.port, pg.local_rank), (LOOPBACK, DEFAULT_PORT, 0));
    }

    #[test]
    fn open_mpi_on_one_machine_meets_on_the_loopback_address_and_across_machines_needs_an_address()
    {
        let one = [
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ];
        let pg = from(&one).unwrap();
        assert_eq!((pg.rank, pg.world_size, pg.local_rank), (1, 2, 1));
        assert_eq!((pg.addr.as_str(), pg.launcher), (LOOPBACK, Launcher::OpenMpi));
        let mut two = one.to_vec();
        two[1] = ("OMPI_COMM_WORLD_SIZE", "4");
        assert!(message(from(&two)).contains("MASTER_ADDR"));
        two.push(("MASTER_ADDR", "n0"));
        two.push(("MASTER_PORT", "1234"));
        let pg = from(&two).unwrap();
        assert_eq!((pg.addr.as_str(), pg.port, pg.world_size), ("n0", 1234, 4));
    }

    #[test]
    fn slurm_finds_rank_zeros_node_in_the_step_node_list() {
        let vars = [
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_NNODES", "4"),
            ("SLURM_JOB_NODELIST", "gpu[07-10]"),
            ("SLURM_STEP_NODELIST", "gpu[08-09,12],big1"),
        ];
        let pg = from(&vars).unwrap();
        assert_eq!((pg.rank, pg.world_size, pg.local_rank), (5, 8, 1));
        assert_eq!((pg.addr.as_str(), pg.launcher), ("gpu08", Launcher::Slurm));
        let pg = from(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), ("SLURM_NNODES", "1")]);
        assert_eq!(pg.unwrap().addr, LOOPBACK);
        let m = message(from(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")]));
        assert!(m.contains("MASTER_ADDR"), "{m}");
    }

    #[test]
    fn slurm_host_lists_give_their_first_host() {
        assert_eq!(first_host("node7,node8").as_deref(), Some("node7"));
        assert_eq!(first_host("gpu[03-05,9],cpu1").as_deref(), Some("gpu03"));
        assert_eq!(first_host("a[1,2]-ib").as_deref(), Some("a1-ib"));
        assert_eq!(first_host("solo").as_deref(), Some("solo"));
        assert_eq!(first_host("").as_deref(), None);
        assert_eq!(first_host("bad[1").as_deref(), None);
    }

    #[test]
    fn the_first_launcher_found_wins_torchrun_then_open_mpi_then_slurm() {
        let vars = [
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ];
        assert_eq!(from(&vars).unwrap().launcher, Launcher::OpenMpi);
        let mut all = vars.to_vec();
        all.extend([("RANK", "2"), ("WORLD_SIZE", "3")]);
        let pg = from(&all).unwrap();
        assert_eq!((pg.launcher, pg.rank), (Launcher::Torchrun, 2));
    }

    #[test]
    fn bad_or_missing_values_are_errors_that_name_the_variable() {
        assert!(message(from(&[])).contains("no launcher"));
        assert!(message(from(&[("RANK", "0")])).contains("`WORLD_SIZE` is not set"));
        assert!(message(from(&[("RANK", "x"), ("WORLD_SIZE", "2")])).contains("`RANK` is \"x\""));
        assert!(message(from(&[("RANK", "2"), ("WORLD_SIZE", "2")])).contains("not below"));
        assert!(message(from(&[("RANK", "0"), ("WORLD_SIZE", "0")])).contains("size is 0"));
        let port = [("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_PORT", "70000")];
        assert!(message(from(&port)).contains("MASTER_PORT"));
        let t = [("RANK", "0"), ("WORLD_SIZE", "1"), ("EMBERFIRE_COLLECTIVE_TIMEOUT", "-1")];
        assert!(message(from(&t)).contains("EMBERFIRE_COLLECTIVE_TIMEOUT"));
        let t = [("RANK", "0"), ("WORLD_SIZE", "1"), ("EMBERFIRE_COLLECTIVE_TIMEOUT", "2.5")];
        assert_eq!(from(&t).unwrap().timeout, Duration::from_millis(2500));
        assert!(ProcessGroup::new(0, 1, "", 1).is_err());
    }
}
