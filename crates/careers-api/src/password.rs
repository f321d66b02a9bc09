//! Password hashing: argon2id, m=19456 KiB, t=2, p=1 (OWASP minimum).
//!
//! Hashing never runs on the async workers. A small pool of dedicated threads (one per core)
//! does it, each reusing its own 19 MiB memory block instead of allocating one per call, at the
//! lowest CPU priority so that a login storm cannot slow other requests down.
//!
//! A request takes a hashing slot before any other work ([`Passwords::admit`]); while all are
//! taken it waits in a fair (first come, first served) line. Waiting, not refusing, is what
//! keeps a flood of logins at the hashers' full rate: a refusal that clients retry at once
//! would keep the async workers busy and starve the idle-priority hashing threads. Only when
//! the line itself is full is a request refused at once (503 with `Retry-After`), before it
//! costs a database or store round trip. Sign-ups hold at most a share of the slots of their
//! own, so that sign-ups, however many, never leave logins without hashing capacity. A login
//! for an unknown e-mail still verifies against a dummy hash, so timing does not reveal which
//! e-mails exist.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use crate::error::ApiError;

const M_COST: u32 = 19_456;
const T_COST: u32 = 2;
const P_COST: u32 = 1;
const OUTPUT_LEN: usize = 32;

/// Slots per hashing thread: one job running and one ready, so a thread never idles while a
/// request between its database read and its hash holds a slot.
const SLOTS_PER_THREAD: usize = 2;
/// Requests that may wait for a slot per hashing thread before new ones are refused: a line of
/// about three seconds at the hashers' rate, longer than any closed-loop flood of 64 clients.
pub const WAITING_PER_THREAD: usize = 128;

type Job = Box<dyn FnOnce(&mut [Block]) + Send>;

/// Who asks for hashing: sign-ups have a share of the capacity of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Logins, password changes, and the command line.
    Login,
    SignUp,
}

pub struct Passwords {
    jobs: SyncSender<Job>,
    slots: Arc<Semaphore>,
    /// Sign-ups take one of these before a slot: at most this many slots are ever theirs.
    signup_share: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
    params: Params,
    dummy: String,
    jobs_run: AtomicU64,
}

impl Passwords {
    /// Starts `threads` hashing threads (normally the number of cores).
    pub fn new(threads: usize) -> Arc<Self> {
        Self::with_line(threads, threads.max(1) * WAITING_PER_THREAD)
    }

    /// Like [`new`](Self::new) with a line of `max_waiting` requests.
    pub fn with_line(threads: usize, max_waiting: usize) -> Arc<Self> {
        let threads = threads.max(1);
        let params = Params::new(M_COST, T_COST, P_COST, Some(OUTPUT_LEN))
            .expect("OWASP argon2id parameters are valid");
        let dummy = hash_with(
            &params,
            b"dummy password for unknown e-mail addresses",
            &mut block(),
        )
        .expect("hashing a fixed password cannot fail");
        let slots = threads * SLOTS_PER_THREAD;
        // Every job holds a slot, so the channel never holds more than `slots` jobs.
        let (jobs, queue) = sync_channel::<Job>(slots);
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
            slots: Arc::new(Semaphore::new(slots)),
            signup_share: Arc::new(Semaphore::new((threads / 2).max(1))),
            waiting: AtomicUsize::new(0),
            max_waiting,
            params,
            dummy,
            jobs_run: AtomicU64::new(0),
        })
    }

    /// A hashing slot, waiting in line for one while all are taken; `Busy` (503) at once when
    /// the line is full.
    pub async fn admit(self: &Arc<Self>, purpose: Purpose) -> Result<Admission, ApiError> {
        // A free slot is taken at once; the semaphores hand released slots to whoever waits
        // first, so this never jumps the line.
        let share = match purpose {
            Purpose::SignUp => self.signup_share.clone().try_acquire_owned().ok(),
            Purpose::Login => None,
        };
        if (purpose == Purpose::Login || share.is_some())
            && let Ok(slot) = self.slots.clone().try_acquire_owned()
        {
            return Ok(Admission {
                passwords: self.clone(),
                _slot: slot,
                _share: share,
            });
        }
        drop(share);
        let _in_line = self.join_line()?;
        let share = match purpose {
            Purpose::SignUp => Some(acquire(&self.signup_share).await?),
            Purpose::Login => None,
        };
        let slot = acquire(&self.slots).await?;
        Ok(Admission {
            passwords: self.clone(),
            _slot: slot,
            _share: share,
        })
    }

    /// A slot only if one is free now, without waiting.
    pub fn try_admit(self: &Arc<Self>) -> Result<Admission, ApiError> {
        let slot = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Busy)?;
        Ok(Admission {
            passwords: self.clone(),
            _slot: slot,
            _share: None,
        })
    }

    pub async fn hash(self: &Arc<Self>, password: String) -> Result<String, ApiError> {
        self.admit(Purpose::Login).await?.hash(password).await
    }

    /// How many hashing jobs ran (hashes and verifications, real or dummy): lets tests prove
    /// that an unknown e-mail costs one and a refused request none.
    #[cfg(any(test, feature = "test-support"))]
    pub fn jobs(&self) -> u64 {
        self.jobs_run.load(Ordering::Relaxed)
    }

    /// Requests waiting for a slot now.
    #[cfg(any(test, feature = "test-support"))]
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// How many requests may wait for a slot.
    #[cfg(any(test, feature = "test-support"))]
    pub fn max_waiting(&self) -> usize {
        self.max_waiting
    }

    fn join_line(&self) -> Result<InLine<'_>, ApiError> {
        match self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_waiting).then_some(n + 1)
            }) {
            Ok(before) => {
                ::metrics::gauge!(crate::metrics::HASH_QUEUE).set((before + 1) as f64);
                Ok(InLine(&self.waiting))
            }
            Err(_) => {
                ::metrics::counter!(crate::metrics::HASH_REFUSALS).increment(1);
                Err(ApiError::Busy)
            }
        }
    }
}

async fn acquire(semaphore: &Arc<Semaphore>) -> Result<OwnedSemaphorePermit, ApiError> {
    // The semaphores are never closed; a closed one would mean the pool is gone.
    semaphore
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::Unavailable)
}

/// A place in the line for a slot, left when the slot is taken or the request gives up.
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        let before = self.0.fetch_sub(1, Ordering::AcqRel);
        ::metrics::gauge!(crate::metrics::HASH_QUEUE).set(before.saturating_sub(1) as f64);
    }
}

/// A hashing slot ([`Passwords::admit`]), given back when its hash is done or when it is
/// dropped unused.
pub struct Admission {
    passwords: Arc<Passwords>,
    _slot: OwnedSemaphorePermit,
    _share: Option<OwnedSemaphorePermit>,
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
        self.passwords.jobs_run.fetch_add(1, Ordering::Relaxed);
        let (done, result) = oneshot::channel();
        let jobs = self.passwords.jobs.clone();
        let job: Job = Box::new(move |block| {
            let output = work(block);
            // Given back before the answer, so that the caller's next job finds its place.
            drop(self);
            let _ = done.send(output);
        });
        // Every queued job holds a slot and the channel holds as many jobs as there are slots.
        match jobs.try_send(job) {
            Ok(()) => result.await.map_err(|_| ApiError::Internal),
            Err(TrySendError::Full(_)) => {
                ::metrics::counter!(crate::metrics::HASH_REFUSALS).increment(1);
                Err(ApiError::Busy)
            }
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
/// reads' p99 during a login storm rose to 2.4–3.6× idle on a shared core (docs/bench-results/decisions-101-120-runs.md, 120).
/// Set through the `thread-priority` crate; the lowest nice value stays as the fallback where
/// the idle class is refused. The webhook worker's thread runs in it too (`app::spawn_webhook_worker`).
pub(crate) fn lower_priority() {
    use thread_priority::unix::{
        NormalThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
        thread_native_id,
    };
    use thread_priority::{ThreadPriority, set_current_thread_priority};
    let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
    if set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle).is_err() {
        let _ = set_current_thread_priority(ThreadPriority::Min);
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
            let place = passwords.try_admit().unwrap();
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
            // The policy is field 41 of the thread's stat line (proc(5)), the 39th after the
            // command name's closing parenthesis.
            let stat = std::fs::read_to_string(task.join("stat")).unwrap();
            let after_name = &stat[stat.rfind(')').unwrap() + 2..];
            let policy: i32 = after_name.split(' ').nth(38).unwrap().parse().unwrap();
            assert_eq!(policy, libc::SCHED_IDLE, "{name}");
            hashing += 1;
        }
        assert!(hashing >= 1, "no hashing thread found");
    }

    #[tokio::test]
    async fn slots_are_bounded_and_given_back_when_dropped_or_done() {
        let passwords = Passwords::with_line(1, 0);
        let held: Vec<_> = (0..SLOTS_PER_THREAD)
            .map(|_| passwords.try_admit().unwrap())
            .collect();
        assert!(matches!(passwords.try_admit(), Err(ApiError::Busy)));
        // No line: a request finding every slot taken is refused at once.
        assert!(matches!(
            passwords.admit(Purpose::Login).await,
            Err(ApiError::Busy)
        ));
        let mut held = held.into_iter();
        drop(held.next());
        let slot = passwords.admit(Purpose::Login).await.unwrap();
        assert!(matches!(passwords.try_admit(), Err(ApiError::Busy)));
        assert!(!slot.verify("x".into(), None).await.unwrap());
        assert!(passwords.try_admit().is_ok());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_wait_in_line_and_only_a_full_line_refuses() {
        let passwords = Passwords::with_line(1, 6);
        let digest = passwords.hash("some password".into()).await.unwrap();
        // Two slots and six places in line: eight requests at once are all served.
        let calls = (0..SLOTS_PER_THREAD + 6).map(|_| async {
            passwords
                .admit(Purpose::Login)
                .await?
                .verify("x".into(), Some(digest.clone()))
                .await
        });
        let results = futures::future::join_all(calls).await;
        assert!(
            results.iter().all(|r| matches!(r, Ok(false))),
            "{results:?}"
        );
        assert_eq!(passwords.waiting(), 0);

        // With the slots held and the line full, the next request is refused at once.
        let held: Vec<_> = (0..SLOTS_PER_THREAD)
            .map(|_| passwords.try_admit().unwrap())
            .collect();
        let line: Vec<_> = (0..6)
            .map(|_| {
                let passwords = passwords.clone();
                tokio::spawn(async move { passwords.admit(Purpose::Login).await.map(drop) })
            })
            .collect();
        while passwords.waiting() < 6 {
            tokio::task::yield_now().await;
        }
        let started = std::time::Instant::now();
        assert!(matches!(
            passwords.admit(Purpose::Login).await,
            Err(ApiError::Busy)
        ));
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
        drop(held);
        for waiter in line {
            waiter.await.unwrap().unwrap();
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sign_ups_hold_at_most_their_share_and_logins_keep_the_rest() {
        let passwords = Passwords::with_line(2, 64);
        let share = 1;
        let signups: Vec<_> = (0..share)
            .map(|_| {
                let passwords = passwords.clone();
                async move { passwords.admit(Purpose::SignUp).await.unwrap() }
            })
            .collect();
        let held = futures::future::join_all(signups).await;
        // A further sign-up waits for the share, not for a slot...
        let waiting = {
            let passwords = passwords.clone();
            tokio::spawn(async move { passwords.admit(Purpose::SignUp).await.map(drop) })
        };
        while passwords.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        // ... so every other slot is free for logins.
        let logins: Vec<_> = (0..2 * SLOTS_PER_THREAD - share)
            .map(|_| passwords.try_admit().unwrap())
            .collect();
        assert_eq!(logins.len(), 3);
        assert!(!waiting.is_finished());
        drop(held);
        drop(logins);
        waiting.await.unwrap().unwrap();
    }
}
