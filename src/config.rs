//! Process configuration: flags with environment fallbacks, read once at start-up.
//!
//! The names are the ones GitHub App developers already know (`APP_ID`, `PRIVATE_KEY_PATH`,
//! `WEBHOOK_SECRET`, …). Secrets are held in [`SecretString`] so they are never printed, logged
//! or put in an error message: every error here names the setting, never its value.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use secrecy::{ExposeSecret, SecretString};

use crate::github::AppCredentials;

/// Default GitHub REST API base URL (github.com). GitHub Enterprise Server uses
/// `https://HOST/api/v3`.
pub const DEFAULT_GITHUB_API_URL: &str = "https://api.github.com";
/// How long a re-run's result is waited for, like a pushed fix's (six hours).
pub const DEFAULT_RERUN_TIMEOUT_MINUTES: u32 = 360;
/// How long the check's result on a pushed fix is waited for (six hours).
pub const DEFAULT_VERDICT_TIMEOUT_MINUTES: u32 = 360;

/// A setting that is missing or invalid. Its message names the setting and what is expected,
/// never the value (which may be a secret).
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {setting}: {problem}")]
pub struct ConfigError {
    pub setting: &'static str,
    pub problem: String,
}

fn config_error(setting: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        setting,
        problem: problem.into(),
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// `ci-medic serve` settings, as given on the command line or in the environment.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The GitHub App's id.
    #[arg(long, env = "APP_ID")]
    pub app_id: Option<String>,
    /// Path to the GitHub App's private key (PEM).
    #[arg(long, env = "PRIVATE_KEY_PATH")]
    pub private_key_path: Option<PathBuf>,
    /// The GitHub App's private key itself (PEM), instead of PRIVATE_KEY_PATH.
    #[arg(
        long,
        env = "PRIVATE_KEY",
        hide_env_values = true,
        allow_hyphen_values = true
    )]
    pub private_key: Option<String>,
    /// The webhook secret configured on the GitHub App; several, comma-separated, while one
    /// is rotated (the first is the current one).
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
    /// GitHub REST API base URL (GitHub Enterprise Server: https://HOST/api/v3).
    #[arg(long, env = "GITHUB_API_URL", default_value = DEFAULT_GITHUB_API_URL)]
    pub github_api_url: String,
    /// Address to listen on.
    #[arg(long, env = "HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one).
    #[arg(long, env = "PORT", default_value_t = 3000)]
    pub port: u16,
    /// Directory of the sled database and stored App credentials.
    #[arg(long, env = "DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// PostgreSQL for deliveries, the job queue, proposals and fix runs, shared by several replicas
    /// (`postgres://user:password@host/db`); unset, the sled database in DATA_DIR.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Seconds a running job stays its replica's without a heartbeat (PostgreSQL).
    #[arg(long, env = "JOB_LEASE_SECONDS", default_value_t = 60)]
    pub job_lease_seconds: u64,
    /// Number of job workers; 0 accepts and queues deliveries without processing them.
    #[arg(long, env = "WORKERS", default_value_t = 4)]
    pub workers: usize,
    /// Seconds running jobs get to finish on shutdown.
    #[arg(long, env = "SHUTDOWN_GRACE_SECONDS", default_value_t = 30)]
    pub shutdown_grace_seconds: u64,
    /// The public URL GitHub reaches this server at (used by the setup flow and links).
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Seconds a client has to send a request's headers, and then its body.
    #[arg(long, env = "REQUEST_TIMEOUT_SECONDS", default_value_t = 10)]
    pub request_timeout_seconds: u64,
    /// Connections served at once.
    #[arg(long, env = "MAX_CONNECTIONS", default_value_t = 512)]
    pub max_connections: usize,
    /// Milliseconds between two content-creating GitHub requests of one installation.
    #[arg(long, env = "GITHUB_WRITE_INTERVAL_MS", default_value_t = 1000)]
    pub github_write_interval_ms: u64,
    /// Seconds between two reads of the App's webhook delivery log for missed deliveries
    /// (also read at start); 0 never reads it.
    #[arg(long, env = "REDELIVERY_INTERVAL_SECONDS", default_value_t = 300)]
    pub redelivery_interval_seconds: u64,
    /// Seconds between two reconcile passes over work in flight (approved fixes not pushed,
    /// pushed fixes and re-runs whose result did not come by webhook), 5 to 86400.
    #[arg(long, env = "RECONCILE_INTERVAL_SECONDS", default_value_t = 120)]
    pub reconcile_interval_seconds: u64,
    /// Minutes the CI monitor waits for the result of a re-run ci-medic requested (`/rerun`,
    /// `triage.auto_rerun`) before the comment says none came and offers `/rerun` again
    /// (1 to 10080).
    #[arg(long, env = "RERUN_TIMEOUT_MINUTES", default_value_t = DEFAULT_RERUN_TIMEOUT_MINUTES)]
    pub rerun_timeout_minutes: u32,
    /// Minutes the CI monitor waits for the failed check to finish on the fix commit ci-medic
    /// pushed before the comment says no verdict came (1 to 10080).
    #[arg(long, env = "VERDICT_TIMEOUT_MINUTES", default_value_t = DEFAULT_VERDICT_TIMEOUT_MINUTES)]
    pub verdict_timeout_minutes: u32,
    /// Operators' token for the status page and the admin API (at least 16 characters);
    /// unset with no OAuth credentials, the status page is off.
    #[arg(long, env = "STATUS_TOKEN", hide_env_values = true)]
    pub status_token: Option<String>,
    /// The App's OAuth client id, for signing in to the status page with GitHub (stored by the
    /// setup flow).
    #[arg(long, env = "GITHUB_CLIENT_ID")]
    pub github_client_id: Option<String>,
    /// The App's OAuth client secret.
    #[arg(long, env = "GITHUB_CLIENT_SECRET", hide_env_values = true)]
    pub github_client_secret: Option<String>,
}

/// Validated service configuration.
#[derive(Clone)]
pub struct ServiceConfig {
    /// The App's id and parsed private key (parsed once here, so a bad key stops start-up).
    pub app: AppCredentials,
    /// The accepted webhook secrets, the current one first.
    pub webhook_secrets: Vec<SecretString>,
    pub github_api_url: String,
    pub host: IpAddr,
    pub port: u16,
    pub data_dir: PathBuf,
    /// `DATABASE_URL`: secret, since it may hold a password.
    pub database_url: Option<SecretString>,
    pub job_lease: Duration,
    pub workers: usize,
    pub shutdown_grace: Duration,
    pub public_url: Option<String>,
    pub request_timeout: Duration,
    pub max_connections: usize,
    pub github_write_interval: Duration,
    /// How often missed deliveries are looked for; `None`: never.
    pub redelivery_interval: Option<Duration>,
    /// How often work in flight is reconciled.
    pub reconcile_interval: Duration,
    pub rerun_timeout_minutes: u32,
    pub verdict_timeout_minutes: u32,
    /// `STATUS_TOKEN`.
    pub status_token: Option<SecretString>,
    /// `GITHUB_CLIENT_ID` and `GITHUB_CLIENT_SECRET`, both or neither.
    pub oauth: Option<crate::status::OAuthApp>,
}

impl std::fmt::Debug for ServiceConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceConfig")
            .field("app", &self.app)
            .field("webhook_secrets", &"[redacted]")
            .field("github_api_url", &self.github_api_url)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("data_dir", &self.data_dir)
            .field("workers", &self.workers)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("public_url", &self.public_url)
            .finish()
    }
}

impl ServeArgs {
    /// Checks every setting and returns the first problem, naming the setting.
    pub fn validate(self) -> Result<ServiceConfig, ConfigError> {
        let app_id = self
            .app_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| config_error("APP_ID", "not set (flag --app-id or env APP_ID)"))?;
        let app_id: u64 = app_id
            .parse()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| config_error("APP_ID", "must be the App's numeric id"))?;

        let app = match (&self.private_key, &self.private_key_path) {
            (Some(pem), _) if !pem.trim().is_empty() => {
                // Environments often carry PEMs with literal `\n`, or base64-encoded (as Probot
                // accepts); take all three forms.
                let pem = if pem.contains("\\n") && !pem.contains('\n') {
                    pem.replace("\\n", "\n")
                } else if !pem.contains("-----BEGIN") {
                    decode_base64_pem(pem).unwrap_or_else(|| pem.clone())
                } else {
                    pem.clone()
                };
                AppCredentials::new(app_id, &SecretString::from(pem))
                    .map_err(|_| config_error("PRIVATE_KEY", NOT_RSA_PEM))?
            }
            (_, Some(path)) => {
                let pem = std::fs::read_to_string(path).map_err(|e| {
                    config_error(
                        "PRIVATE_KEY_PATH",
                        format!("cannot read {}: {}", path.display(), e.kind()),
                    )
                })?;
                AppCredentials::new(app_id, &SecretString::from(pem))
                    .map_err(|_| config_error("PRIVATE_KEY_PATH", NOT_RSA_PEM))?
            }
            _ => {
                return Err(config_error(
                    "PRIVATE_KEY_PATH",
                    "not set (flag --private-key-path or env PRIVATE_KEY_PATH, or PRIVATE_KEY holding the PEM)",
                ));
            }
        };

        let webhook_secret = self
            .webhook_secret
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                config_error(
                    "WEBHOOK_SECRET",
                    "not set (flag --webhook-secret or env WEBHOOK_SECRET)",
                )
            })?;
        // A secret never holds a comma in practice (GitHub's UI takes any text, but generated
        // ones are hex or base64), so a comma separates the secrets of a rotation.
        let webhook_secrets: Vec<SecretString> = webhook_secret
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| SecretString::from(s.to_string()))
            .collect();
        if webhook_secrets.is_empty() {
            return Err(config_error(
                "WEBHOOK_SECRET",
                "holds no secret (only commas or spaces)",
            ));
        }
        if !(1..=600).contains(&self.request_timeout_seconds) {
            return Err(config_error(
                "REQUEST_TIMEOUT_SECONDS",
                "must be between 1 and 600",
            ));
        }
        if self.github_write_interval_ms > 10_000 {
            return Err(config_error(
                "GITHUB_WRITE_INTERVAL_MS",
                "must be between 0 and 10000",
            ));
        }
        if !(1..=10_080).contains(&self.rerun_timeout_minutes) {
            return Err(config_error(
                "RERUN_TIMEOUT_MINUTES",
                "must be between 1 and 10080 (a week)",
            ));
        }
        if !(1..=10_080).contains(&self.verdict_timeout_minutes) {
            return Err(config_error(
                "VERDICT_TIMEOUT_MINUTES",
                "must be between 1 and 10080 (a week)",
            ));
        }
        if self.redelivery_interval_seconds > 86_400 {
            return Err(config_error(
                "REDELIVERY_INTERVAL_SECONDS",
                "must be between 0 (off) and 86400",
            ));
        }
        if !(5..=86_400).contains(&self.reconcile_interval_seconds) {
            return Err(config_error(
                "RECONCILE_INTERVAL_SECONDS",
                "must be between 5 and 86400",
            ));
        }
        if !(1..=100_000).contains(&self.max_connections) {
            return Err(config_error(
                "MAX_CONNECTIONS",
                "must be between 1 and 100000",
            ));
        }

        let github_api_url = normalize_base_url(&self.github_api_url)
            .map_err(|p| config_error("GITHUB_API_URL", p))?;

        let status_token = match self.status_token.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(t) if t.chars().count() < 16 => {
                return Err(config_error(
                    "STATUS_TOKEN",
                    "must be at least 16 characters (it guards the job queue and every repository's state)",
                ));
            }
            Some(t) => Some(SecretString::from(t.to_string())),
        };
        let nonempty =
            |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let oauth = match (
            nonempty(self.github_client_id),
            nonempty(self.github_client_secret),
        ) {
            (Some(client_id), Some(secret)) => Some(crate::status::OAuthApp {
                client_id,
                client_secret: SecretString::from(secret),
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(config_error(
                    "GITHUB_CLIENT_SECRET",
                    "not set, but GITHUB_CLIENT_ID is: give both or neither",
                ));
            }
            (None, Some(_)) => {
                return Err(config_error(
                    "GITHUB_CLIENT_ID",
                    "not set, but GITHUB_CLIENT_SECRET is: give both or neither",
                ));
            }
        };

        let host: IpAddr = self.host.parse().map_err(|_| {
            config_error("HOST", "must be an IP address such as 127.0.0.1 or 0.0.0.0")
        })?;

        if self.data_dir.as_os_str().is_empty() {
            return Err(config_error("DATA_DIR", "must not be empty"));
        }
        if self.workers > 256 {
            return Err(config_error("WORKERS", "must be between 0 and 256"));
        }
        if !(2..=3600).contains(&self.job_lease_seconds) {
            return Err(config_error(
                "JOB_LEASE_SECONDS",
                "must be between 2 and 3600",
            ));
        }
        let database_url = match self.database_url {
            Some(u) if !u.trim().is_empty() => {
                let u = u.trim();
                if !(u.starts_with("postgres://") || u.starts_with("postgresql://")) {
                    return Err(config_error(
                        "DATABASE_URL",
                        "must be a PostgreSQL URL (postgres://user:password@host/db), or unset for the embedded store",
                    ));
                }
                Some(SecretString::from(u.to_string()))
            }
            _ => None,
        };
        let public_url = match self.public_url {
            Some(u) if !u.trim().is_empty() => {
                Some(normalize_base_url(&u).map_err(|p| config_error("PUBLIC_URL", p))?)
            }
            _ => None,
        };

        Ok(ServiceConfig {
            app,
            webhook_secrets,
            github_api_url,
            host,
            port: self.port,
            data_dir: self.data_dir,
            database_url,
            job_lease: Duration::from_secs(self.job_lease_seconds),
            workers: self.workers,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_seconds),
            public_url,
            request_timeout: Duration::from_secs(self.request_timeout_seconds),
            max_connections: self.max_connections,
            github_write_interval: Duration::from_millis(self.github_write_interval_ms),
            redelivery_interval: (self.redelivery_interval_seconds > 0)
                .then(|| Duration::from_secs(self.redelivery_interval_seconds)),
            reconcile_interval: Duration::from_secs(self.reconcile_interval_seconds),
            rerun_timeout_minutes: self.rerun_timeout_minutes,
            verdict_timeout_minutes: self.verdict_timeout_minutes,
            status_token,
            oauth,
        })
    }
}

/// A PEM given base64-encoded (one line, as environments that cannot hold newlines carry it).
fn decode_base64_pem(text: &str) -> Option<String> {
    use base64::Engine as _;
    let compact: String = text.split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()?;
    let pem = String::from_utf8(bytes).ok()?;
    pem.contains("-----BEGIN").then_some(pem)
}

/// What start-up says of a key that does not parse (never the key's text, never the parser's
/// own message, which may quote it).
const NOT_RSA_PEM: &str = "not an RSA private key in PEM format";

/// Accepts `http(s)://host[:port][/path]`, strips trailing slashes.
pub fn normalize_base_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("must start with http:// or https://".into());
    }
    if parsed.host_str().is_none() {
        return Err("must name a host".into());
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("must not have a query or fragment".into());
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Convenience for code that needs the secret bytes (signature verification).
pub fn secret_bytes(secret: &SecretString) -> &[u8] {
    secret.expose_secret().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn args(extra: &[&str]) -> ServeArgs {
        let mut v = vec!["t"];
        v.extend_from_slice(extra);
        T::try_parse_from(v).unwrap().args
    }

    const KEY: &str = include_str!("../fixtures/keys/test-app.pem");

    #[test]
    fn missing_settings_are_named() {
        // SAFETY of test isolation: clap reads env; these names are unlikely set in the test env.
        let e = args(&[]).validate().unwrap_err();
        assert_eq!(e.setting, "APP_ID");
        let e = args(&["--app-id", "x"]).validate().unwrap_err();
        assert_eq!(e.setting, "APP_ID");
        let e = args(&["--app-id", "12"]).validate().unwrap_err();
        assert_eq!(e.setting, "PRIVATE_KEY_PATH");
        let e = args(&["--app-id", "12", "--private-key", "nonsense-secret"])
            .validate()
            .unwrap_err();
        assert_eq!(e.setting, "PRIVATE_KEY");
        assert!(!e.to_string().contains("nonsense-secret"));
        let e = args(&["--app-id", "12", "--private-key", KEY])
            .validate()
            .unwrap_err();
        assert_eq!(e.setting, "WEBHOOK_SECRET");
        let e = args(&[
            "--app-id",
            "12",
            "--private-key",
            KEY,
            "--webhook-secret",
            "s3cr3t",
            "--github-api-url",
            "ftp://x",
        ])
        .validate()
        .unwrap_err();
        assert_eq!(e.setting, "GITHUB_API_URL");
        let e = args(&[
            "--app-id",
            "12",
            "--private-key",
            KEY,
            "--webhook-secret",
            "s3cr3t",
            "--host",
            "nohost",
        ])
        .validate()
        .unwrap_err();
        assert_eq!(e.setting, "HOST");
    }

    #[test]
    fn valid_config_hides_secrets_in_debug() {
        let c = args(&[
            "--app-id",
            "12",
            "--private-key",
            KEY,
            "--webhook-secret",
            "s3cr3t-value",
            "--github-api-url",
            "https://ghe.example.com/api/v3/",
        ])
        .validate()
        .unwrap();
        assert_eq!(c.github_api_url, "https://ghe.example.com/api/v3");
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("s3cr3t-value"));
        assert!(!dbg.contains("PRIVATE KEY"));
    }

    #[test]
    fn pem_with_escaped_newlines_is_accepted() {
        let escaped = KEY.trim().replace('\n', "\\n");
        let c = args(&[
            "--app-id",
            "7",
            "--private-key",
            &escaped,
            "--webhook-secret",
            "x",
        ])
        .validate();
        assert!(c.is_ok());
    }
}

// ----- setup mode and the documented environment --------------------------------------------------

/// What `ci-medic serve` runs: the service, or the one-time setup flow when no App exists yet.
#[derive(Debug)]
pub enum ServeMode {
    Run(Box<ServiceConfig>),
    Setup(crate::setup::SetupConfig),
}

/// Decides the serve mode from the flags/environment and the App stored by the setup flow.
///
/// Each of `APP_ID`, the private key and `WEBHOOK_SECRET` given on the command line or in the
/// environment wins over the stored one; the stored App fills in the rest. With none given and
/// nothing stored, setup mode. Partly configured (say `APP_ID` without a key) with nothing
/// stored is an error naming the missing setting, never a silent fall back to setup mode.
pub fn resolve_with_stored(
    args: ServeArgs,
    stored: Option<crate::setup::StoredApp>,
) -> Result<ServeMode, ConfigError> {
    resolve_with_stored_from(args, stored, |k| std::env::var(k).ok())
}

/// [`resolve_with_stored`] with the environment lookup (for `GITHUB_WEB_URL`) given.
pub fn resolve_with_stored_from(
    mut args: ServeArgs,
    stored: Option<crate::setup::StoredApp>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ServeMode, ConfigError> {
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    let any_given = given(&args.app_id)
        || given(&args.private_key)
        || args.private_key_path.is_some()
        || given(&args.webhook_secret);
    match stored {
        Some(app) => {
            if !given(&args.app_id) {
                args.app_id = Some(app.app_id.to_string());
            }
            if !given(&args.private_key) && args.private_key_path.is_none() {
                args.private_key = Some(app.private_key_pem.expose_secret().to_string());
            }
            if !given(&args.webhook_secret) {
                args.webhook_secret = Some(app.webhook_secret.expose_secret().to_string());
            }
            // The OAuth pair is taken from the stored App only as a pair, and only when
            // neither is given.
            if !given(&args.github_client_id)
                && !given(&args.github_client_secret)
                && let (Some(id), Some(secret)) = (&app.client_id, &app.client_secret)
            {
                args.github_client_id = Some(id.clone());
                args.github_client_secret = Some(secret.expose_secret().to_string());
            }
            args.validate().map(|c| ServeMode::Run(Box::new(c)))
        }
        None if any_given => args.validate().map(|c| ServeMode::Run(Box::new(c))),
        None => {
            let github_api_url = normalize_base_url(&args.github_api_url)
                .map_err(|p| config_error("GITHUB_API_URL", p))?;
            let github_web_url = match env("GITHUB_WEB_URL").filter(|v| !v.trim().is_empty()) {
                Some(u) => normalize_base_url(&u).map_err(|p| config_error("GITHUB_WEB_URL", p))?,
                None => crate::setup::web_url_for_api(&github_api_url),
            };
            let host: IpAddr = args.host.parse().map_err(|_| {
                config_error("HOST", "must be an IP address such as 127.0.0.1 or 0.0.0.0")
            })?;
            if args.data_dir.as_os_str().is_empty() {
                return Err(config_error("DATA_DIR", "must not be empty"));
            }
            let public_url = match args.public_url {
                Some(u) if !u.trim().is_empty() => {
                    Some(normalize_base_url(&u).map_err(|p| config_error("PUBLIC_URL", p))?)
                }
                _ => None,
            };
            Ok(ServeMode::Setup(crate::setup::SetupConfig {
                host,
                port: args.port,
                github_api_url,
                github_web_url,
                public_url,
            }))
        }
    }
}

/// Every environment variable ci-medic reads: name, default (`""` when it has none) and what it
/// does. The README's table is [`env_markdown_table`]; tests check this list against the CLI's
/// own definitions and the README against this list, so the documentation cannot fall behind.
pub const ENV_VARS: &[(&str, &str, &str)] = &[
    (
        "APP_ID",
        "",
        "The GitHub App's numeric id. Not needed once the setup flow has stored the App.",
    ),
    (
        "PRIVATE_KEY_PATH",
        "",
        "Path to the App's private key (PEM).",
    ),
    (
        "PRIVATE_KEY",
        "",
        "The App's private key itself (PEM; literal `\\n` or the whole PEM base64-encoded accepted), instead of `PRIVATE_KEY_PATH`.",
    ),
    (
        "WEBHOOK_SECRET",
        "",
        "The App's webhook secret; deliveries without a valid `X-Hub-Signature-256` are refused. While rotating, give the new and the old one comma-separated: either is accepted.",
    ),
    (
        "GITHUB_API_URL",
        DEFAULT_GITHUB_API_URL,
        "GitHub REST API base URL; GitHub Enterprise Server: `https://HOST/api/v3`.",
    ),
    (
        "GITHUB_WEB_URL",
        "https://github.com",
        "GitHub's web origin for the setup flow and `ci-medic manifest`; derived from `GITHUB_API_URL` when unset (`https://HOST/api/v3` → `https://HOST`).",
    ),
    (
        "PUBLIC_URL",
        "",
        "The URL GitHub reaches this server at; the manifest's webhook and callback URLs are built from it.",
    ),
    (
        "HOST",
        "127.0.0.1",
        "Address to listen on (`0.0.0.0` in containers).",
    ),
    ("PORT", "3000", "Port to listen on (`0` picks a free one)."),
    (
        "DATA_DIR",
        "./data",
        "Directory of the sled database (`db/`), the webhook payload spool (`spool/`) and the stored App credentials. Keep it on a persistent volume.",
    ),
    (
        "DATABASE_URL",
        "",
        "PostgreSQL (`postgres://user:password@host/db`) for deliveries, the job queue, proposals, fix runs, triage history, installations and the sealed App credentials, shared by several replicas (see \"More than one replica\"); migrations are applied at start. Unset: the sled database in `DATA_DIR`.",
    ),
    (
        "CREDENTIALS_KEY",
        "",
        "With `DATABASE_URL`: the 256-bit key (64 hex digits or base64; `openssl rand -hex 32`) that seals the App's stored credentials in the database (XChaCha20-Poly1305). Needed once credentials are stored there; a wrong key stops `serve` at start. Never logged.",
    ),
    (
        "CREDENTIALS_KEY_FILE",
        "",
        "A file holding `CREDENTIALS_KEY` (a mounted secret), read when `CREDENTIALS_KEY` is unset.",
    ),
    (
        "CREDENTIALS_KEY_PREVIOUS",
        "",
        "During a key rotation, the old `CREDENTIALS_KEY`: credentials sealed with it are opened and sealed again with the new key at start (see \"More than one replica\").",
    ),
    (
        "JOB_LEASE_SECONDS",
        "60",
        "With `DATABASE_URL`: seconds a running job stays its replica's without a heartbeat (renewed every third of it); a job whose replica died runs again elsewhere after it.",
    ),
    (
        "WORKERS",
        "4",
        "Job workers; `0` accepts and queues deliveries without processing them.",
    ),
    (
        "SHUTDOWN_GRACE_SECONDS",
        "30",
        "Seconds running jobs get to finish on SIGTERM; jobs cut off run again at the next start.",
    ),
    (
        "REQUEST_TIMEOUT_SECONDS",
        "10",
        "Seconds a client has to send a request's headers, and then its body (GitHub gives up after 10); idle keep-alive connections close after it too.",
    ),
    (
        "MAX_CONNECTIONS",
        "512",
        "Connections served at once; more wait in the kernel's backlog. With the timeout, slow or idle clients cannot exhaust the server.",
    ),
    (
        "GITHUB_WRITE_INTERVAL_MS",
        "1000",
        "Milliseconds between two content-creating GitHub requests (comments, check runs, commits) of one installation, which are also never sent concurrently, as GitHub's best practices ask; reads are not paced.",
    ),
    (
        "REDELIVERY_INTERVAL_SECONDS",
        "300",
        "Seconds between two reads of the App's webhook delivery log, at start and then periodically, to have GitHub send again the deliveries that failed while ci-medic was down or answering 5xx; `0` turns it off.",
    ),
    (
        "RECONCILE_INTERVAL_SECONDS",
        "120",
        "Seconds between two reconcile passes, which move on the work in flight whose next step did not come by webhook: an approved fix not yet pushed (after a crash), a pushed fix or a requested re-run whose check result was missed (its check runs are polled, one call per run). One replica reconciles at a time; 5 to 86400.",
    ),
    (
        "RERUN_TIMEOUT_MINUTES",
        "360",
        "Minutes the CI monitor waits for the result of a re-run ci-medic requested (`/rerun`, `triage.auto_rerun`); after that the comment says no verdict arrived in time and offers `/rerun` again (1 to 10080).",
    ),
    (
        "VERDICT_TIMEOUT_MINUTES",
        "360",
        "Minutes the CI monitor waits for the failed check to finish on the fix commit ci-medic pushed; after that the comment says no verdict arrived in time and the code_fix is `failed` (1 to 10080).",
    ),
    (
        "STATUS_TOKEN",
        "",
        "Operators' secret (at least 16 characters) for the status page at `/` and the admin API under `/admin/`: sent as `Authorization: Bearer …` or typed once into the sign-in form. With neither it nor the OAuth pair, the status page is off.",
    ),
    (
        "GITHUB_CLIENT_ID",
        "",
        "The App's OAuth client id, so people sign in to the status page with GitHub and see only the repositories they can access. Stored by the setup flow; give it with `GITHUB_CLIENT_SECRET` for an App made by hand.",
    ),
    (
        "GITHUB_CLIENT_SECRET",
        "",
        "The App's OAuth client secret (with `GITHUB_CLIENT_ID`).",
    ),
    (
        "LOG_FORMAT",
        "text",
        "`text` or `json` (one object per line), on stderr.",
    ),
    (
        "RUST_LOG",
        "info",
        "Log filter, e.g. `info,ci_medic=debug`.",
    ),
    (
        "LLM_API_URL",
        "",
        "Base URL of an OpenAI-compatible chat-completions API for fixes the built-in fixers cannot make. Set all three `LLM_API_URL`, `LLM_API_KEY`, `LLM_MODEL`, or none.",
    ),
    ("LLM_API_KEY", "", "Bearer key for `LLM_API_URL`."),
    ("LLM_MODEL", "", "Model name sent to `LLM_API_URL`."),
    (
        "LLM_TIMEOUT_SECS",
        "60",
        "Time limit of one LLM request, 1 to 600 seconds.",
    ),
    (
        "LLM_MAX_RETRIES",
        "2",
        "Retries of a failed LLM request (at most 5).",
    ),
    (
        "DOCKER_HOST",
        "unix:///var/run/docker.sock",
        "Docker daemon the executor sandbox (`verify: docker`, `ci-medic exec`) talks to.",
    ),
    (
        "FIXER_PINNED_IMAGES",
        "8",
        "How many images of tool versions a project pins (installed from PyPI or npm by the tool tier, tagged `<fixer image>:pin-<tool>-<version>`) are kept per fixer image; the oldest made are removed first, never the one in use. 0 to 1000.",
    ),
];

/// The README's table of environment variables, generated from [`ENV_VARS`].
pub fn env_markdown_table() -> String {
    let mut out = String::from("| Variable | Default | Description |\n|---|---|---|\n");
    for (name, default, description) in ENV_VARS {
        let default = if default.is_empty() {
            "*unset*".to_string()
        } else {
            format!("`{default}`")
        };
        out.push_str(&format!(
            "| `{name}` | {default} | {} |\n",
            description.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod env_docs_tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    fn env_of(cmd: &clap::Command, out: &mut Vec<(String, Option<String>)>) {
        for a in cmd.get_arguments() {
            if let Some(env) = a.get_env() {
                let default = a
                    .get_default_values()
                    .first()
                    .map(|d| d.to_string_lossy().into_owned());
                out.push((env.to_string_lossy().into_owned(), default));
            }
        }
        for sub in cmd.get_subcommands() {
            env_of(sub, out);
        }
    }

    fn documented(name: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
        ENV_VARS.iter().find(|(n, _, _)| *n == name)
    }

    #[test]
    fn every_cli_env_is_listed_with_its_default() {
        let mut found = Vec::new();
        env_of(&crate::cli::Cli::command(), &mut found);
        // `manifest` may not be wired into the CLI yet; its flags are checked too.
        let m = <crate::setup::ManifestArgs as clap::Args>::augment_args(clap::Command::new("m"));
        env_of(&m, &mut found);
        assert!(found.iter().any(|(n, _)| n == "APP_ID"));
        for (name, default) in found {
            let Some((_, doc_default, _)) = documented(&name) else {
                panic!("env {name} is read by the CLI but missing from config::ENV_VARS");
            };
            if let Some(d) = default {
                assert_eq!(*doc_default, d, "documented default of {name}");
            }
        }
    }

    #[test]
    fn every_llm_env_is_listed() {
        let asked = std::sync::Mutex::new(Vec::new());
        let _ = crate::fix_agent::LlmConfig::from_lookup(|k| {
            asked.lock().unwrap().push(k.to_string());
            Some(
                match k {
                    "LLM_API_URL" => "http://127.0.0.1:9/v1",
                    "LLM_TIMEOUT_SECS" | "LLM_MAX_RETRIES" => "3",
                    _ => "x",
                }
                .to_string(),
            )
        });
        let asked = asked.into_inner().unwrap();
        assert!(asked.len() >= 5, "{asked:?}");
        for k in asked {
            assert!(documented(&k).is_some(), "{k} missing from ENV_VARS");
        }
    }

    #[test]
    fn names_are_unique_and_table_has_them_all() {
        let mut names: Vec<_> = ENV_VARS.iter().map(|(n, _, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ENV_VARS.len());
        let t = env_markdown_table();
        for n in names {
            assert!(t.contains(&format!("| `{n}` |")));
        }
    }

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn args(extra: &[&str]) -> ServeArgs {
        let mut v = vec!["t"];
        v.extend_from_slice(extra);
        T::try_parse_from(v).unwrap().args
    }

    const KEY: &str = include_str!("../fixtures/keys/test-app.pem");

    fn stored() -> crate::setup::StoredApp {
        crate::setup::StoredApp {
            app_id: 99,
            private_key_pem: SecretString::from(KEY.to_string()),
            webhook_secret: SecretString::from("stored-secret".to_string()),
            slug: "ci-medic".into(),
            html_url: "https://github.com/apps/ci-medic".into(),
            client_id: Some("Iv1.stored".into()),
            client_secret: Some(SecretString::from("stored-oauth".to_string())),
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn nothing_configured_means_setup_mode() {
        let m = resolve_with_stored_from(
            args(&["--github-api-url", "https://ghe.corp/api/v3"]),
            None,
            no_env,
        )
        .unwrap();
        let ServeMode::Setup(s) = m else {
            panic!("expected setup mode")
        };
        assert_eq!(s.github_web_url, "https://ghe.corp");
        let m = resolve_with_stored_from(args(&[]), None, |k| {
            (k == "GITHUB_WEB_URL").then(|| "https://web.example/".to_string())
        })
        .unwrap();
        let ServeMode::Setup(s) = m else {
            panic!("expected setup mode")
        };
        assert_eq!(s.github_web_url, "https://web.example");
    }

    #[test]
    fn partial_configuration_is_an_error_not_setup() {
        let e = resolve_with_stored_from(args(&["--app-id", "5"]), None, no_env).unwrap_err();
        assert_eq!(e.setting, "PRIVATE_KEY_PATH");
    }

    #[test]
    fn stored_app_is_used_and_env_wins() {
        let ServeMode::Run(c) =
            resolve_with_stored_from(args(&[]), Some(stored()), no_env).unwrap()
        else {
            panic!("expected run mode")
        };
        assert_eq!(c.app.app_id, 99);
        assert_eq!(c.webhook_secrets[0].expose_secret(), "stored-secret");
        let ServeMode::Run(c) = resolve_with_stored_from(
            args(&["--app-id", "7", "--webhook-secret", "env-secret"]),
            Some(stored()),
            no_env,
        )
        .unwrap() else {
            panic!("expected run mode")
        };
        assert_eq!(c.app.app_id, 7);
        assert_eq!(c.webhook_secrets[0].expose_secret(), "env-secret");
    }

    #[test]
    fn comma_separated_secrets_are_all_accepted_the_first_current() {
        let ServeMode::Run(c) = resolve_with_stored_from(
            args(&["--webhook-secret", "new-one, old-one,"]),
            Some(stored()),
            no_env,
        )
        .unwrap() else {
            panic!("expected run mode")
        };
        let got: Vec<&str> = c
            .webhook_secrets
            .iter()
            .map(|s| s.expose_secret())
            .collect();
        assert_eq!(got, ["new-one", "old-one"]);
        let e =
            resolve_with_stored_from(args(&["--webhook-secret", " , "]), Some(stored()), no_env)
                .unwrap_err();
        assert_eq!(e.setting, "WEBHOOK_SECRET");
    }

    #[test]
    fn a_base64_encoded_private_key_is_accepted() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(KEY);
        let ServeMode::Run(c) =
            resolve_with_stored_from(args(&["--private-key", &b64]), Some(stored()), no_env)
                .unwrap()
        else {
            panic!("expected run mode")
        };
        assert_eq!(c.app.app_id, 99);
        let e = resolve_with_stored_from(
            args(&[
                "--app-id",
                "5",
                "--private-key",
                "bm90IGEga2V5",
                "--webhook-secret",
                "s",
            ]),
            None,
            no_env,
        )
        .unwrap_err();
        assert_eq!(e.setting, "PRIVATE_KEY");
    }

    #[test]
    fn request_timeout_and_connections_are_bounded() {
        for (flag, value, setting) in [
            ("--request-timeout-seconds", "0", "REQUEST_TIMEOUT_SECONDS"),
            ("--max-connections", "0", "MAX_CONNECTIONS"),
            (
                "--reconcile-interval-seconds",
                "1",
                "RECONCILE_INTERVAL_SECONDS",
            ),
            (
                "--reconcile-interval-seconds",
                "86401",
                "RECONCILE_INTERVAL_SECONDS",
            ),
        ] {
            let e =
                resolve_with_stored_from(args(&[flag, value]), Some(stored()), no_env).unwrap_err();
            assert_eq!(e.setting, setting);
        }
    }
}
