//! Password hashing: argon2id, m=19456 KiB, t=2, p=1 (OWASP minimum).
//!
//! Hashing never runs on the async workers. A small pool of dedicated threads (one per core)
//! does it, each reusing its own 19 MiB memory block instead of allocating one per call, at the
//! lowest CPU priority so that a login storm cannot slow other requests down. Jobs wait in a
//! bounded queue; when it is full, a login is refused at once (503) rather than queued without
//! end, and before it does any other work: a login first takes its place among the hashing
//! jobs ([`Passwords::admit`]), so a refused one costs no database or store round trip. A login
//! for an unknown e-mail still verifies against a dummy hash, so timing does not reveal which
//! e-mails exist.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq;
use tokio::sync::oneshot;

use crate::error::ApiError;

const M_COST: u32 = 19_456;
const T_COST: u32 = 2;
const P_COST: u32 = 1;
const OUTPUT_LEN: usize = 32;

/// Jobs that may wait per hashing thread before new logins are refused.
const QUEUE_PER_THREAD: usize = 8;

type Job = Box<dyn FnOnce(&mut [Block]) + Send>;

pub struct Passwords {
    jobs: SyncSender<Job>,
    /// Jobs admitted and not yet finished (waiting, running, or still to be sent), at most
    /// `capacity`: the queue plus one running job per thread.
    admitted: AtomicUsize,
    capacity: usize,
    params: Params,
    dummy: String,
    verifications: AtomicU64,
}

impl Passwords {
    /// Starts `threads` hashing threads (normally the number of cores).
    pub fn new(threads: usize) -> Arc<Self> {
        let threads = threads.max(1);
        let params = Params::new(M_COST, T_COST, P_COST, Some(OUTPUT_LEN))
            .expect("OWASP argon2id parameters are valid");
        let dummy = hash_with(
            &params,
            b"dummy password for unknown e-mail addresses",
            &mut block(),
        )
        .expect("hashing a fixed password cannot fail");
        let (jobs, queue) = sync_channel::<Job>(threads * (QUEUE_PER_THREAD + 1));
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("argon2-{n}"))
                .spawn(move || worker(&queue))
                .expect("spawn a hashing thread");
        }
        Arc::new(Self {
            jobs,
            admitted: AtomicUsize::new(0),
            capacity: threads * (QUEUE_PER_THREAD + 1),
            params,
            dummy,
            verifications: AtomicU64::new(0),
        })
    }

    /// A place among the hashing jobs, or `Busy` (503) when all are taken.
    pub fn admit(self: &Arc<Self>) -> Result<Admission, ApiError> {
        self.admitted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.capacity).then_some(n + 1)
            })
            .map(|_| Admission {
                passwords: self.clone(),
            })
            .map_err(|_| ApiError::Busy)
    }

    pub async fn hash(self: &Arc<Self>, password: String) -> Result<String, ApiError> {
        self.admit()?.hash(password).await
    }

    /// How many verifications ran (real or dummy): lets tests prove unknown e-mails cost one.
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }
}

/// A place among the hashing jobs ([`Passwords::admit`]), given back when its hash is done or
/// when it is dropped unused.
pub struct Admission {
    passwords: Arc<Passwords>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.passwords.admitted.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub async fn hash(self, password: String) -> Result<String, ApiError> {
        let params = self.passwords.params.clone();
        self.run(move |block| hash_with(&params, password.as_bytes(), block))
            .await?
            .ok_or(ApiError::Internal)
    }

    /// Verifies `password` against `digest`, or against the dummy hash when there is no
    /// account, so that both cases cost the same.
    pub async fn verify(self, password: String, digest: Option<String>) -> Result<bool, ApiError> {
        let exists = digest.is_some();
        let digest = digest.unwrap_or_else(|| self.passwords.dummy.clone());
        self.passwords.verifications.fetch_add(1, Ordering::Relaxed);
        let matched = self
            .run(move |block| verify_with(password.as_bytes(), &digest, block))
            .await?;
        Ok(exists && matched)
    }

    /// Runs `work` on a hashing thread; the place is given back when it has run.
    async fn run<R: Send + 'static>(
        self,
        work: impl FnOnce(&mut [Block]) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (done, result) = oneshot::channel();
        let jobs = self.passwords.jobs.clone();
        let job: Job = Box::new(move |block| {
            let output = work(block);
            // Given back before the answer, so that the caller's next job finds its place.
            drop(self);
            let _ = done.send(output);
        });
        // Every queued job holds a place and the queue holds `capacity` jobs: it is never full.
        match jobs.try_send(job) {
            Ok(()) => result.await.map_err(|_| ApiError::Internal),
            Err(TrySendError::Full(_)) => Err(ApiError::Busy),
            Err(TrySendError::Disconnected(_)) => Err(ApiError::Unavailable),
        }
    }
}

fn block() -> Vec<Block> {
    vec![Block::default(); M_COST as usize]
}

/// A hashing thread: idle priority, one reused memory block, jobs until the pool is dropped.
fn worker(queue: &Mutex<Receiver<Job>>) {
    lower_priority();
    let mut memory = block();
    loop {
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            Ok(job) => job(&mut memory[..]),
            Err(_) => return,
        }
    }
}

/// The idle scheduling class for the calling thread (Linux sets it per thread): it runs only
/// when no ordinary thread wants the core, and a request thread that wakes up preempts it at
/// once. Nice 19 alone still let a woken request wait for the hashing thread's time slice: the
/// reads' p99 during a login storm rose to 2.4–3.6× idle on a shared core (docs/PERFORMANCE.md).
/// Nice 19 stays as the fallback where the idle class is refused.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: both calls only read their arguments (a plain struct on the stack); `0` names
    // the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        libc::sched_setscheduler(
            0,
            libc::SCHED_IDLE,
            &libc::sched_param { sched_priority: 0 },
        );
    }
}

fn hash_with(params: &Params, password: &[u8], memory: &mut [Block]) -> Option<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).ok()?;
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut out = [0u8; OUTPUT_LEN];
    argon
        .hash_password_into_with_memory(password, &salt, &mut out, &mut *memory)
        .ok()?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(params).ok()?,
        salt: Some(Salt::new(&salt).ok()?),
        hash: Some(Output::new(&out).ok()?),
    };
    Some(phc.to_string())
}

fn verify_with(password: &[u8], digest: &str, memory: &mut [Block]) -> bool {
    let Ok(phc) = PasswordHash::new(digest) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (phc.salt.as_ref(), phc.hash.as_ref()) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(phc.algorithm.as_str()) else {
        return false;
    };
    let version = phc
        .version
        .and_then(|v| Version::try_from(v).ok())
        .unwrap_or_default();
    let Ok(params) = Params::try_from(&phc) else {
        return false;
    };
    let expected = expected.as_bytes();
    let argon = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.len()];
    // Digests with other parameters (older or stronger) get a block of their own size.
    let mut other;
    let memory: &mut [Block] = if params.block_count() == memory.len() {
        memory
    } else {
        other = vec![Block::default(); params.block_count()];
        &mut other
    };
    argon
        .hash_password_into_with_memory(password, salt, &mut out, &mut *memory)
        .is_ok()
        && bool::from(out.ct_eq(expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_reject() {
        let passwords = Passwords::new(1);
        let digest = passwords.hash("correct horse".into()).await.unwrap();
        assert!(digest.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        let verify = |password: &str, digest: Option<String>| {
            let place = passwords.admit().unwrap();
            place.verify(password.into(), digest)
        };
        assert!(verify("correct horse", Some(digest.clone())).await.unwrap());
        assert!(!verify("wrong horse", Some(digest)).await.unwrap());
        assert!(!verify("anything", None).await.unwrap());
        assert!(!verify("x", Some("not a hash".into())).await.unwrap());
    }

    #[test]
    fn digests_are_standard_phc_strings() {
        let params = Params::new(M_COST, T_COST, P_COST, Some(OUTPUT_LEN)).unwrap();
        let digest = hash_with(&params, b"interop", &mut block()).unwrap();
        // The argon2 crate's own verifier accepts what we write.
        use argon2::PasswordVerifier;
        Argon2::default()
            .verify_password(b"interop", digest.as_str())
            .unwrap();
    }
}

#[cfg(test)]
mod queue_tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn hashing_threads_run_in_the_idle_scheduling_class() {
        let passwords = Passwords::new(1);
        // Once a hash is done, the thread has set its class.
        passwords.hash("some password".into()).await.unwrap();
        let mut hashing = 0;
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let task = task.unwrap().path();
            let name = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
            if !name.starts_with("argon2-") {
                continue;
            }
            let tid: libc::pid_t = task.file_name().unwrap().to_str().unwrap().parse().unwrap();
            // SAFETY: reads the scheduling policy of a thread of this process.
            let policy = unsafe { libc::sched_getscheduler(tid) };
            assert_eq!(policy, libc::SCHED_IDLE, "{name}");
            hashing += 1;
        }
        assert!(hashing >= 1, "no hashing thread found");
    }

    #[tokio::test]
    async fn places_are_bounded_and_given_back_when_dropped_or_done() {
        let passwords = Passwords::new(1);
        let held: Vec<_> = (0..1 + QUEUE_PER_THREAD)
            .map(|_| passwords.admit().unwrap())
            .collect();
        assert!(matches!(passwords.admit(), Err(ApiError::Busy)));
        assert!(matches!(
            passwords.hash("x".into()).await,
            Err(ApiError::Busy)
        ));
        // A place dropped unused is free again; one used is free again once its hash is done.
        let mut held = held.into_iter();
        drop(held.next());
        let place = passwords.admit().unwrap();
        assert!(matches!(passwords.admit(), Err(ApiError::Busy)));
        assert!(!place.verify("x".into(), None).await.unwrap());
        assert!(passwords.admit().is_ok());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_queue_refuses_quickly_instead_of_waiting() {
        let passwords = Passwords::new(1);
        let digest = passwords.hash("some password".into()).await.unwrap();
        let attempts = 1 + QUEUE_PER_THREAD + 20;
        let calls = (0..attempts).map(|_| async {
            passwords
                .admit()?
                .verify("x".into(), Some(digest.clone()))
                .await
        });
        let results = futures::future::join_all(calls).await;
        let busy = results
            .iter()
            .filter(|r| matches!(r, Err(ApiError::Busy)))
            .count();
        let done = results.iter().filter(|r| matches!(r, Ok(false))).count();
        assert!(busy >= 20, "{busy} refused");
        assert_eq!(busy + done, attempts);
    }
}
