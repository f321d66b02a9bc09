//! `RedisStore` against a real three-node Redis Cluster started from `/usr/bin/redis-server`.
//!
//! Runs when `TEST_REDIS_URL` is set (the marker that Redis tests are wanted); with
//! `REQUIRE_EXTERNAL_BACKENDS=1` a missing URL fails instead of skipping. The cluster lives in a
//! private temporary folder on free ports and is torn down (processes killed, folder removed)
//! however the test ends.

mod support;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fred::prelude::ClientLike;
use sessions::store::{Ending, RedisStore, RedisStoreConfig, Rotation};
use sessions::{SessionId, SessionKey, SessionRecord, TokenStore};

const REDIS_SERVER: &str = "/usr/bin/redis-server";
const REDIS_CLI: &str = "redis-cli";
/// A fixed Unix time (2027): the stores take `now` as a parameter.
const NOW: i64 = 1_800_000_000;
const LIFE: i64 = 7 * 24 * 3600;
const GRACE: i64 = 30;
const LIMITS: sessions::SessionLimits = sessions::SessionLimits {
    grace_seconds: GRACE,
    idle_seconds: 0,
};
const DEFAULT: &str = "default";
const TEAM: &str = "team";

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_record(subject: i64) -> SessionRecord {
    SessionRecord {
        subject,
        access_uid: SessionId::random(),
        access_iat: NOW,
        previous_uid: None,
        rotated_at: 0,
        created_at: NOW,
        last_seen_at: NOW,
        expires_at: NOW + LIFE,
    }
}

fn key_of(subject: i64) -> SessionKey {
    SessionKey {
        subject,
        ruid: SessionId::random(),
    }
}

/// `count` distinct free TCP ports on 127.0.0.1 (all bound at once, then released).
fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("local address").port())
        .collect()
}

fn cli(args: &[&str]) -> Output {
    Command::new(REDIS_CLI)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Polls `check` every 100 ms until it holds or `limit` has passed.
fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check()
}

/// Three primaries with every slot assigned. Dropping it kills the nodes and removes the folder.
struct Cluster {
    ports: Vec<u16>,
    nodes: Vec<Child>,
    dir: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Cluster {
    fn start() -> Cluster {
        let dir = std::env::temp_dir().join(format!("careers-cluster-{}", random_hex()));
        std::fs::create_dir_all(&dir).expect("create the cluster folder");
        // Three client ports and three cluster-bus ports (`port + 10000` may not exist).
        let ports = free_ports(6);
        let (client_ports, bus_ports) = ports.split_at(3);
        let mut cluster = Cluster {
            ports: client_ports.to_vec(),
            nodes: Vec::new(),
            dir,
        };
        for (port, bus) in client_ports.iter().zip(bus_ports) {
            let log = cluster.dir.join(format!("redis-{port}.log"));
            let child = Command::new(REDIS_SERVER)
                .args(["--port", &port.to_string()])
                .args(["--cluster-port", &bus.to_string()])
                .args(["--bind", "127.0.0.1"])
                .args(["--cluster-enabled", "yes"])
                .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                .args(["--cluster-node-timeout", "2000"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .args(["--dir", cluster.dir.to_str().expect("UTF-8 temp dir")])
                .args(["--logfile", log.to_str().expect("UTF-8 temp dir")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start redis-server");
            cluster.nodes.push(child);
        }
        for port in cluster.ports.clone() {
            let port = port.to_string();
            let up = wait_until(Duration::from_secs(5), || {
                text(&cli(&["-p", &port, "ping"])).trim() == "PONG"
            });
            assert!(
                up,
                "cluster node on port {port} did not answer PING: {}",
                cluster.logs()
            );
        }
        let addresses: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let mut create = vec!["--cluster", "create"];
        create.extend(addresses.iter().map(String::as_str));
        create.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        let created = cli(&create);
        assert!(
            created.status.success(),
            "redis-cli --cluster create failed: {}",
            text(&created)
        );
        for port in cluster.ports.clone() {
            let port = port.to_string();
            let ok = wait_until(Duration::from_secs(10), || {
                text(&cli(&["-p", &port, "cluster", "info"])).contains("cluster_state:ok")
            });
            assert!(
                ok,
                "node {port} never reached cluster_state:ok: {}",
                cluster.logs()
            );
        }
        cluster
    }

    fn logs(&self) -> String {
        self.ports
            .iter()
            .map(|p| {
                let log = std::fs::read_to_string(self.dir.join(format!("redis-{p}.log")));
                format!("\n--- node {p} ---\n{}", log.unwrap_or_default())
            })
            .collect()
    }

    /// `redis://` URL of the cluster, every node a seed.
    fn url(&self) -> String {
        let [first, rest @ ..] = self.ports.as_slice() else {
            unreachable!("three nodes");
        };
        let seeds: Vec<String> = rest.iter().map(|p| format!("node=127.0.0.1:{p}")).collect();
        format!("redis-cluster://127.0.0.1:{first}?{}", seeds.join("&"))
    }

    /// Keys matching `pattern` held by each node, in node order.
    fn keys_per_node(&self, pattern: &str) -> Vec<usize> {
        self.ports
            .iter()
            .map(|port| {
                let port = port.to_string();
                let output = cli(&["-p", &port, "--scan", "--pattern", pattern]);
                assert!(
                    output.status.success(),
                    "scan node {port}: {}",
                    text(&output)
                );
                String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .count()
            })
            .collect()
    }
}

#[cfg_attr(not(redis_backend), ignore = "needs TEST_REDIS_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_on_a_three_node_cluster() {
    if support::redis_url("the Redis Cluster test").is_none() {
        return;
    }
    let started = Instant::now();
    let cluster = tokio::task::spawn_blocking(Cluster::start)
        .await
        .expect("start the cluster");
    let cluster = Arc::new(cluster);
    let prefix = format!("careers-test:{}:", random_hex());
    let store = RedisStore::connect(RedisStoreConfig {
        url: cluster.url(),
        key_prefix: prefix.clone(),
        command_timeout: Duration::from_secs(2),
        cache_sessions: true,
    })
    .await
    .expect("connect to the cluster");
    assert!(
        store.client().is_clustered(),
        "a redis-cluster:// URL gives a Cluster client"
    );
    assert_eq!(
        store.cache_stats(),
        None,
        "no session cache on Cluster: one PING cannot confirm every node's keys"
    );
    store.ping().await.expect("the cluster answers PING");
    let store = Arc::new(store);

    sessions_spread_over_every_node(&cluster, &store, &prefix).await;
    concurrent_rotates_rotate_exactly_once(&store).await;
    one_identitys_sessions_and_index_change_together(&cluster, &store, &prefix).await;
    flush_reaches_every_node(&cluster, &store, &prefix).await;

    let elapsed = started.elapsed();
    eprintln!("cluster test took {elapsed:?}");
    drop(store);
    drop(cluster);
}

/// Insert, get, rotate (rotated, then replayed), end and get for 200 sessions of 200
/// identities whose keys land on all three nodes.
async fn sessions_spread_over_every_node(cluster: &Cluster, store: &RedisStore, prefix: &str) {
    const SESSIONS: i64 = 200;
    let mut sessions = Vec::new();
    for subject in 0..SESSIONS {
        let key = key_of(subject);
        let record = new_record(subject);
        store
            .insert(
                DEFAULT,
                &key,
                &record,
                &sessions::SessionMeta::default(),
                20,
                NOW,
            )
            .await
            .expect("insert");
        sessions.push((key, record));
    }
    let pattern = format!("{prefix}{DEFAULT}:*");
    let per_node = cluster.keys_per_node(&pattern);
    assert!(
        per_node.iter().all(|&n| n > 0),
        "every node holds some of the sessions: {per_node:?}"
    );
    assert_eq!(
        per_node.iter().sum::<usize>(),
        2 * SESSIONS as usize,
        "a record and an index per identity: {per_node:?}"
    );
    // An identity's record and index live on one node (one hash slot).
    for subject in 0..10 {
        let per_node = cluster.keys_per_node(&format!("{prefix}{DEFAULT}:{{{subject}}}*"));
        let mut sorted = per_node.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 0, 2], "identity {subject}: {per_node:?}");
    }

    let at = NOW + 60;
    for (key, record) in &sessions {
        let got = store.get(DEFAULT, key, NOW).await.expect("get");
        assert_eq!(got, Some(*record));

        let new_uid = SessionId::random();
        let rotated = store
            .rotate(DEFAULT, key, &record.access_uid, &new_uid, at, LIMITS)
            .await
            .expect("rotate");
        let expected = SessionRecord {
            access_uid: new_uid,
            access_iat: at,
            previous_uid: Some(record.access_uid),
            rotated_at: at,
            last_seen_at: at,
            ..*record
        };
        assert_eq!(rotated, Rotation::Rotated(expected));
        let replayed = store
            .rotate(
                DEFAULT,
                key,
                &record.access_uid,
                &SessionId::random(),
                at + 1,
                LIMITS,
            )
            .await
            .expect("rotate again");
        assert_eq!(
            replayed,
            Rotation::Replayed(expected),
            "grace-window replay"
        );
        assert_eq!(
            store.get(DEFAULT, key, at + 1).await.expect("get"),
            Some(expected)
        );

        let ended = store
            .end(DEFAULT, key, &new_uid, at + 2, LIMITS)
            .await
            .expect("end");
        assert_eq!(ended, Ending::Ended);
        assert_eq!(store.get(DEFAULT, key, at + 2).await.expect("get"), None);
    }
    let per_node = cluster.keys_per_node(&pattern);
    assert_eq!(
        per_node,
        vec![0, 0, 0],
        "ended sessions leave no key on any node, record or index"
    );
}

async fn concurrent_rotates_rotate_exactly_once(store: &Arc<RedisStore>) {
    const RACERS: usize = 50;
    let key = key_of(8);
    let record = new_record(8);
    store
        .insert(
            DEFAULT,
            &key,
            &record,
            &sessions::SessionMeta::default(),
            20,
            NOW,
        )
        .await
        .expect("insert");
    let at = NOW + 60;
    let new_uids: Vec<SessionId> = (0..RACERS).map(|_| SessionId::random()).collect();
    let barrier = Arc::new(tokio::sync::Barrier::new(RACERS));
    let tasks = new_uids.iter().map(|new_uid| {
        let (store, barrier, new_uid) = (store.clone(), barrier.clone(), *new_uid);
        tokio::spawn(async move {
            barrier.wait().await;
            store
                .rotate(DEFAULT, &key, &record.access_uid, &new_uid, at, LIMITS)
                .await
                .expect("rotate")
        })
    });
    let outcomes: Vec<Rotation> = futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|joined| joined.expect("rotate task"))
        .collect();
    let rotated: Vec<SessionRecord> = outcomes
        .iter()
        .filter_map(|o| match o {
            Rotation::Rotated(r) => Some(*r),
            _ => None,
        })
        .collect();
    assert_eq!(rotated.len(), 1, "exactly one rotation: {outcomes:?}");
    let winner = rotated[0];
    assert!(new_uids.contains(&winner.access_uid));
    assert_eq!(winner.previous_uid, Some(record.access_uid));
    let replays = outcomes
        .iter()
        .filter(|o| **o == Rotation::Replayed(winner))
        .count();
    assert_eq!(
        replays,
        RACERS - 1,
        "all others replay the one rotation: {outcomes:?}"
    );
    assert_eq!(
        store.get(DEFAULT, &key, at).await.expect("get"),
        Some(winner)
    );
    assert_eq!(
        store
            .end(DEFAULT, &key, &winner.access_uid, at, LIMITS)
            .await
            .expect("end"),
        Ending::Ended
    );
}

/// The scripts that change a session and its identity's index (insert with eviction, touch,
/// rotate, end, revoke) run on a Cluster node: every key they reach is in one slot.
async fn one_identitys_sessions_and_index_change_together(
    cluster: &Cluster,
    store: &RedisStore,
    prefix: &str,
) {
    const LIMIT: usize = 3;
    let pattern = format!("{prefix}{DEFAULT}:*");
    for subject in 1000..1010 {
        let mut keys = Vec::new();
        for seen in 0..LIMIT as i64 {
            let key = key_of(subject);
            let record = SessionRecord {
                last_seen_at: NOW + seen,
                ..new_record(subject)
            };
            let evicted = store
                .insert(
                    DEFAULT,
                    &key,
                    &record,
                    &sessions::SessionMeta::default(),
                    LIMIT,
                    NOW,
                )
                .await
                .expect("insert");
            assert_eq!(evicted, 0);
            keys.push((key, record));
        }
        // The oldest is touched; the next login ends the second, now the least recently used.
        store
            .touch(DEFAULT, &keys[0].0, NOW + 10)
            .await
            .expect("touch");
        let newest = key_of(subject);
        let evicted = store
            .insert(
                DEFAULT,
                &newest,
                &SessionRecord {
                    last_seen_at: NOW + 11,
                    ..new_record(subject)
                },
                &sessions::SessionMeta::default(),
                LIMIT,
                NOW,
            )
            .await
            .expect("insert");
        assert_eq!(evicted, 1, "identity {subject}");
        assert_eq!(
            store.get(DEFAULT, &keys[1].0, NOW).await.expect("get"),
            None
        );
        let touched = store
            .get(DEFAULT, &keys[0].0, NOW)
            .await
            .expect("get")
            .expect("the touched session lives");
        assert_eq!(touched.last_seen_at, NOW + 10);

        let (third, third_record) = &keys[2];
        assert!(matches!(
            store
                .rotate(
                    DEFAULT,
                    third,
                    &third_record.access_uid,
                    &SessionId::random(),
                    NOW + 12,
                    LIMITS
                )
                .await
                .expect("rotate"),
            Rotation::Rotated(_)
        ));
        assert!(store.revoke(DEFAULT, &keys[0].0).await.expect("revoke"));
        assert!(store.revoke(DEFAULT, third).await.expect("revoke"));
        assert!(store.revoke(DEFAULT, &newest).await.expect("revoke"));
        assert!(!store.revoke(DEFAULT, &newest).await.expect("revoke"));
    }
    assert_eq!(
        cluster.keys_per_node(&pattern),
        vec![0, 0, 0],
        "revoked sessions leave no record or index"
    );
}

/// `flush` scans every primary: team records go from all three nodes, default ones stay.
async fn flush_reaches_every_node(cluster: &Cluster, store: &RedisStore, prefix: &str) {
    const TEAM_SESSIONS: i64 = 90;
    const DEFAULT_SESSIONS: i64 = 30;
    let mut team = Vec::new();
    for subject in 0..TEAM_SESSIONS {
        let key = key_of(subject);
        let record = new_record(subject);
        store
            .insert(
                TEAM,
                &key,
                &record,
                &sessions::SessionMeta::default(),
                20,
                NOW,
            )
            .await
            .expect("insert");
        team.push(key);
    }
    let mut default = Vec::new();
    for subject in 0..DEFAULT_SESSIONS {
        let key = key_of(subject);
        let record = new_record(subject);
        store
            .insert(
                DEFAULT,
                &key,
                &record,
                &sessions::SessionMeta::default(),
                20,
                NOW,
            )
            .await
            .expect("insert");
        default.push((key, record));
    }
    let team_pattern = format!("{prefix}{TEAM}:*");
    let default_pattern = format!("{prefix}{DEFAULT}:*");
    let per_node = cluster.keys_per_node(&team_pattern);
    assert!(
        per_node.iter().all(|&n| n > 0),
        "team keys on every node: {per_node:?}"
    );

    let removed = store.flush(TEAM).await.expect("flush");

    let per_node = cluster.keys_per_node(&team_pattern);
    assert_eq!(per_node, vec![0, 0, 0], "no team key left on any node");
    for key in &team {
        assert_eq!(store.get(TEAM, key, NOW).await.expect("get"), None);
    }
    let per_node = cluster.keys_per_node(&default_pattern);
    assert_eq!(
        per_node.iter().sum::<usize>(),
        2 * DEFAULT_SESSIONS as usize,
        "default records and indexes survive: {per_node:?}"
    );
    for (key, record) in &default {
        assert_eq!(
            store.get(DEFAULT, key, NOW).await.expect("get"),
            Some(*record)
        );
    }
    assert_eq!(store.flush(TEAM).await.expect("flush again"), 0);
    // Last, so that the checks above run whatever the count.
    assert_eq!(
        removed, TEAM_SESSIONS as u64,
        "flush counts the sessions of all nodes"
    );
}
