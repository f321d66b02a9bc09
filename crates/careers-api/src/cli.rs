//! `careers-api [serve] | migrate | admins create | admins set-password | users create | seed |
//! sessions flush`.

use std::io::{BufRead, Read};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sessions::{SystemClock, TokenStore};

use crate::app;
use crate::areas::{ADMIN, USER};
use crate::config::Config;
use crate::db;
use crate::models::country;
use crate::models::identities::admin;
use crate::models::identities::notices::{CredentialChange, Notice};
use crate::models::identities::user;
use crate::password::Passwords;
use crate::state::{self, AppState};

#[derive(Debug, Parser)]
#[command(name = "careers-api", version, about = "Careers marketplace HTTP API")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server (the default).
    Serve,
    /// Apply pending database migrations.
    Migrate,
    /// Manage admins (team dashboard).
    Admins {
        #[command(subcommand)]
        command: AdminsCommand,
    },
    /// Manage users.
    Users {
        #[command(subcommand)]
        command: UsersCommand,
    },
    /// Load the demo data set (development and test only).
    Seed {
        /// The demo data set of the README (required: there is no other).
        #[arg(long)]
        demo: bool,
    },
    /// Manage sessions in the token store.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Print the OpenAPI 3.1 document (what `GET /openapi.json` serves), for client generators.
    Openapi,
}

/// Where a new password comes from: `--password P` or `--password-stdin`, exactly one of them.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct PasswordSource {
    /// The password (visible in the process list and the shell's history: prefer
    /// --password-stdin).
    #[arg(long)]
    password: Option<String>,
    /// Read the password from standard input: its first line, without the line ending.
    #[arg(long)]
    password_stdin: bool,
}

impl PasswordSource {
    fn read(self) -> Result<String, String> {
        match self.password {
            Some(password) => Ok(password),
            None => password_from_stdin(),
        }
    }
}

#[derive(Debug, Subcommand)]
enum AdminsCommand {
    /// Create an admin.
    Create {
        #[arg(long)]
        email: String,
        #[command(flatten)]
        password: PasswordSource,
        #[arg(long, default_value = "Team")]
        first_name: String,
        #[arg(long, default_value = "Admin")]
        last_name: String,
    },
    /// Set an admin's password, read from standard input (its first line). Admins have no
    /// self-service reset.
    SetPassword {
        #[arg(long)]
        email: String,
    },
    /// Remove an admin's second factor (a lost or stolen authenticator) and end their sessions;
    /// they enrol again at their next login.
    ResetMfa {
        #[arg(long)]
        email: String,
    },
}

#[derive(Debug, Subcommand)]
enum UsersCommand {
    /// Create a user.
    Create {
        #[arg(long)]
        email: String,
        #[command(flatten)]
        password: PasswordSource,
        #[arg(long)]
        first_name: String,
        #[arg(long)]
        last_name: String,
        #[arg(long, default_value = "+1")]
        phone_code: String,
        #[arg(long, default_value = "5550100")]
        mobile: String,
        /// ISO 3166 alpha-2 code of the user's country.
        #[arg(long, default_value = "US")]
        country: String,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// End every session of one context (the other context is untouched).
    Flush {
        #[arg(long, value_enum)]
        context: ContextArg,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ContextArg {
    User,
    Admin,
}

pub const MIN_PASSWORD_LEN: usize = 12;

pub async fn run(cli: Cli) -> ExitCode {
    if let Some(Command::Openapi) = cli.command {
        // Needs no configuration: the document does not depend on it.
        match serde_json::to_string_pretty(&crate::openapi::document()) {
            Ok(text) => {
                use std::io::Write as _;
                // A closed pipe (`| head`) is no failure of this command.
                let _ = writeln!(std::io::stdout().lock(), "{text}");
                return ExitCode::SUCCESS;
            }
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(error) => {
            crate::logging::flush();
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Openapi => Ok(()),
        Command::Migrate => migrate(config).await,
        Command::Admins {
            command:
                AdminsCommand::Create {
                    email,
                    password,
                    first_name,
                    last_name,
                },
        } => create_admin(config, email, password, first_name, last_name).await,
        Command::Admins {
            command: AdminsCommand::SetPassword { email },
        } => set_admin_password(config, email).await,
        Command::Admins {
            command: AdminsCommand::ResetMfa { email },
        } => reset_admin_mfa(config, email).await,
        Command::Users {
            command:
                UsersCommand::Create {
                    email,
                    password,
                    first_name,
                    last_name,
                    phone_code,
                    mobile,
                    country,
                },
        } => {
            create_user(
                config,
                password,
                user::NewUser {
                    email,
                    password_digest: String::new(),
                    first_name,
                    last_name,
                    phone_code,
                    mobile,
                    country_id: 0,
                },
                country,
            )
            .await
        }
        Command::Seed { demo } => seed(config, demo).await,
        Command::Sessions {
            command: SessionsCommand::Flush { context },
        } => flush(config, context).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // Pending log lines first, so that the output keeps its order.
            crate::logging::flush();
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> Result<(), String> {
    if config.signing_secret_generated {
        tracing::warn!(
            "JWT_SIGNING_SECRET is not set: using a random key; sessions end when the process stops"
        );
    }
    if let Some(seconds) = config.access_token_seconds {
        tracing::warn!(
            seconds,
            "ACCESS_TOKEN_LIFETIME shortens access tokens for browser tests (never in production)"
        );
    }
    if config.redis_url.is_none() {
        tracing::info!("token store: in memory (sessions end when the process stops)");
    }
    if config.mfa.key_derived {
        tracing::warn!(
            "MFA_ENCRYPTION_KEY is not set: admins' TOTP secrets are encrypted with a key derived \
             from the signing secret; set MFA_ENCRYPTION_KEY (required in production, staging, qa)"
        );
    }
    if config.mail.smtp_url.is_none() {
        tracing::info!(dir = %config.mail.outbox_dir, "mail: no SMTP_URL, messages are written as .eml files");
    }
    let bind_addr = config.bind_addr;
    let metrics = config
        .metrics_addr
        .map(|addr| crate::metrics::install().map(|handle| (addr, handle)))
        .transpose()?;
    let state = AppState::build(config, Arc::new(SystemClock))
        .await
        .map_err(|e| e.to_string())?;
    if let Some((addr, handle)) = metrics {
        let kept = state.clone();
        let response_cache = move || {
            let stats = kept.answers.as_ref()?.stats();
            Some((stats.hits, stats.misses))
        };
        let bound =
            crate::metrics::serve(addr, handle, Arc::clone(&state.sessions), response_cache)
                .await?;
        tracing::info!(%bound, "metrics: GET /metrics");
    }
    app::spawn_memory_sweeper(&state);
    app::spawn_mail_worker(&state);
    app::spawn_job_closer(&state);
    app::spawn_webhook_worker(&state);
    let listener = tokio::net::TcpListener::bind(bind_addr)
        .await
        .map_err(|e| format!("cannot listen on {bind_addr}: {e}"))?;
    tracing::info!(%bind_addr, env = state.config.env.name(), "listening");
    app::serve(listener, app::build_app(state), shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

async fn migrate(config: Config) -> Result<(), String> {
    connected(&config).await?;
    println!("migrations applied");
    Ok(())
}

/// The rules of a new password (CONTRACT §10): at least 12 characters, and a zxcvbn score of
/// 3 or more, the account's e-mail counting against it.
fn check_password(password: &str, email: &str) -> Result<(), String> {
    if password.chars().count() < MIN_PASSWORD_LEN {
        return Err(format!(
            "password must be at least {MIN_PASSWORD_LEN} characters"
        ));
    }
    match crate::forms::password_weakness(password, &[email]) {
        Some(message) => Err(format!("password {message}")),
        None => Ok(()),
    }
}

/// The longest first line `--password-stdin` reads: a file piped in by mistake is not read whole.
const MAX_STDIN_PASSWORD_BYTES: u64 = 16 * 1024;

/// The first line of standard input without its line ending (`\n` or `\r\n`).
fn password_from_stdin() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_PASSWORD_BYTES + 1)
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password from standard input: {e}"))?;
    if line.len() as u64 > MAX_STDIN_PASSWORD_BYTES {
        return Err("the password on standard input is too long".into());
    }
    if let Some(rest) = line.strip_suffix('\n') {
        line.truncate(rest.strip_suffix('\r').unwrap_or(rest).len());
    }
    if line.is_empty() {
        return Err("no password on standard input".into());
    }
    Ok(line)
}

fn check_email(email: &str) -> Result<(), String> {
    use garde::Validate;
    #[derive(garde::Validate)]
    struct Email<'a>(#[garde(email)] &'a str);
    Email(email.trim())
        .validate()
        .map_err(|_| format!("not an e-mail address: {email:?}"))
}

/// Opens the database and applies pending migrations (every command that touches data does).
async fn connected(config: &Config) -> Result<sea_orm::DatabaseConnection, String> {
    db::connect_migrated(&config.database_url.0, config.database_schema.as_deref())
        .await
        .map_err(|e| format!("database: {e}"))
}

async fn create_admin(
    config: Config,
    email: String,
    password: PasswordSource,
    first_name: String,
    last_name: String,
) -> Result<(), String> {
    check_email(&email)?;
    let password = password.read()?;
    check_password(&password, &email)?;
    let db = connected(&config).await?;
    let digest = Passwords::new(1)
        .hash(password)
        .await
        .map_err(|e| e.to_string())?;
    let admin = admin::create_admin(
        &db,
        admin::NewAdmin {
            email,
            password_digest: digest,
            first_name,
            last_name,
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    println!("admin {} created: {}", admin.id, admin.email);
    Ok(())
}

async fn create_user(
    config: Config,
    password: PasswordSource,
    mut new: user::NewUser,
    country: String,
) -> Result<(), String> {
    check_email(&new.email)?;
    let password = password.read()?;
    check_password(&password, &new.email)?;
    let db = connected(&config).await?;
    new.country_id = country::country_id_by_code(&db, &country)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("unknown country code {country:?}"))?;
    new.password_digest = Passwords::new(1)
        .hash(password)
        .await
        .map_err(|e| e.to_string())?;
    // An operator made the account: its e-mail counts as verified (CONTRACT §14).
    let user = user::create_user(&db, new, user::EmailProof::Verified, chrono::Utc::now())
        .await
        .map_err(|e| e.to_string())?;
    println!("user {} created: {}", user.id, user.email);
    Ok(())
}

async fn set_admin_password(config: Config, email: String) -> Result<(), String> {
    let password = password_from_stdin()?;
    check_password(&password, &email)?;
    let db = connected(&config).await?;
    let admin = admin::find_admin_by_email(&db, &email)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no admin with the e-mail {:?}", email.trim()))?;
    let digest = Passwords::new(1)
        .hash(password)
        .await
        .map_err(|e| e.to_string())?;
    let secrets = crate::mfa::SecretBox::new(&config.mfa.keys);
    let notice = Notice {
        secrets: &secrets,
        recipient: &admin.email,
    };
    admin::set_admin_password_digest(
        &db,
        admin.id,
        digest,
        &notice,
        CredentialChange::PasswordSet,
        chrono::Utc::now(),
    )
    .await
    .map_err(|e| e.to_string())?;
    println!("admin {}: password set", admin.id);
    crate::audit::record(None, crate::audit::Action::AdminPasswordSet, admin.id);
    // The admin's sessions end with the old password (CONTRACT §10).
    end_admin_sessions(&config, admin.id).await
}

/// `admins reset-mfa`: the admin's factor and recovery codes are removed and their sessions end
/// (CONTRACT §11), for an authenticator that is lost or stolen.
async fn reset_admin_mfa(config: Config, email: String) -> Result<(), String> {
    let db = connected(&config).await?;
    let admin = admin::find_admin_by_email(&db, &email)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no admin with the e-mail {:?}", email.trim()))?;
    let secrets = crate::mfa::SecretBox::new(&config.mfa.keys);
    let notice = Notice {
        secrets: &secrets,
        recipient: &admin.email,
    };
    admin::remove_totp(&db, admin.id, &notice, chrono::Utc::now())
        .await
        .map_err(|e| e.to_string())?;
    println!("admin {}: second factor removed", admin.id);
    crate::audit::record(None, crate::audit::Action::SecondFactorRemoved, admin.id);
    end_admin_sessions(&config, admin.id).await
}

/// Ends every session of admin `id` in the configured store; the in-memory store lives inside
/// the server, out of a command's reach, which the command says.
async fn end_admin_sessions(config: &Config, id: i64) -> Result<(), String> {
    if config.redis_url.is_none() {
        eprintln!(
            "note: the in-memory token store lives inside the server process; \
             the admin's open sessions end when it restarts"
        );
        return Ok(());
    }
    let store = state::build_store(config)
        .await
        .map_err(|e| e.to_string())?;
    let ended = store
        .revoke_all(ADMIN.namespace, id, None)
        .await
        .map_err(|e| e.to_string())?;
    println!("{ended} admin sessions ended");
    Ok(())
}

async fn seed(config: Config, demo: bool) -> Result<(), String> {
    if !demo {
        return Err("nothing to seed: pass --demo".into());
    }
    let env = config.env.name();
    if !config.env.allows_test_shortcuts() {
        return Err(format!(
            "seed --demo loads known passwords and runs in development and test only, not in {env}"
        ));
    }
    let db = connected(&config).await?;
    let passwords = Passwords::new(1);
    let mut created = crate::seed::demo(&db, &passwords)
        .await
        .map_err(|e| e.to_string())?;
    if env == "development" && config.signing_secret_generated && config.mfa.key_derived {
        println!(
            "skipped the demo admin with a second factor: its secret would be sealed with a key \
             this process made up; set MFA_ENCRYPTION_KEY (or JWT_SIGNING_SECRET) here and in the server"
        );
    } else if env == "development" {
        let secrets = crate::mfa::SecretBox::new(&config.mfa.keys);
        created += crate::seed::demo_mfa_admin(&db, &passwords, &secrets)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            "development only: admin {} has TOTP secret {} (published: never use it elsewhere)",
            crate::seed::DEMO_MFA_ADMIN_EMAIL,
            crate::seed::DEMO_MFA_TOTP_SECRET
        );
    }
    println!("demo data loaded: {created} rows created");
    Ok(())
}

async fn flush(config: Config, context: ContextArg) -> Result<(), String> {
    if config.redis_url.is_none() {
        return Err(
            "the in-memory token store lives inside the server process; \
             its sessions end when the server stops. Set REDIS_URL to flush a shared store"
                .into(),
        );
    }
    let store = state::build_store(&config)
        .await
        .map_err(|e| e.to_string())?;
    store.ping().await.map_err(|e| e.to_string())?;
    let context = match context {
        ContextArg::User => USER,
        ContextArg::Admin => ADMIN,
    };
    let removed = store
        .flush(context.namespace)
        .await
        .map_err(|e| e.to_string())?;
    println!("{removed} {} sessions ended", context.name);
    Ok(())
}
