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

/// Default GitHub REST API base URL (github.com). GitHub Enterprise Server uses
/// `https://HOST/api/v3`.
pub const DEFAULT_GITHUB_API_URL: &str = "https://api.github.com";

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
    /// The webhook secret configured on the GitHub App.
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
    /// Number of job workers; 0 accepts and queues deliveries without processing them.
    #[arg(long, env = "WORKERS", default_value_t = 4)]
    pub workers: usize,
    /// Seconds running jobs get to finish on shutdown.
    #[arg(long, env = "SHUTDOWN_GRACE_SECONDS", default_value_t = 30)]
    pub shutdown_grace_seconds: u64,
    /// The public URL GitHub reaches this server at (used by the setup flow and links).
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,
}

/// GitHub App credentials, validated.
#[derive(Clone)]
pub struct AppCredentials {
    pub app_id: u64,
    pub private_key_pem: SecretString,
}

impl std::fmt::Debug for AppCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppCredentials")
            .field("app_id", &self.app_id)
            .field("private_key_pem", &"[redacted]")
            .finish()
    }
}

/// Validated service configuration.
#[derive(Clone)]
pub struct ServiceConfig {
    pub app: AppCredentials,
    pub webhook_secret: SecretString,
    pub github_api_url: String,
    pub host: IpAddr,
    pub port: u16,
    pub data_dir: PathBuf,
    pub workers: usize,
    pub shutdown_grace: Duration,
    pub public_url: Option<String>,
}

impl std::fmt::Debug for ServiceConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceConfig")
            .field("app", &self.app)
            .field("webhook_secret", &"[redacted]")
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

        let pem = match (&self.private_key, &self.private_key_path) {
            (Some(pem), _) if !pem.trim().is_empty() => {
                // Environments often carry PEMs with literal `\n`; accept both forms.
                let pem = if pem.contains("\\n") && !pem.contains('\n') {
                    pem.replace("\\n", "\n")
                } else {
                    pem.clone()
                };
                check_rsa_pem(&pem).map_err(|p| config_error("PRIVATE_KEY", p))?;
                pem
            }
            (_, Some(path)) => {
                let pem = std::fs::read_to_string(path).map_err(|e| {
                    config_error(
                        "PRIVATE_KEY_PATH",
                        format!("cannot read {}: {}", path.display(), e.kind()),
                    )
                })?;
                check_rsa_pem(&pem).map_err(|p| config_error("PRIVATE_KEY_PATH", p))?;
                pem
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

        let github_api_url = normalize_base_url(&self.github_api_url)
            .map_err(|p| config_error("GITHUB_API_URL", p))?;

        let host: IpAddr = self.host.parse().map_err(|_| {
            config_error("HOST", "must be an IP address such as 127.0.0.1 or 0.0.0.0")
        })?;

        if self.data_dir.as_os_str().is_empty() {
            return Err(config_error("DATA_DIR", "must not be empty"));
        }
        if self.workers > 256 {
            return Err(config_error("WORKERS", "must be between 0 and 256"));
        }
        let public_url = match self.public_url {
            Some(u) if !u.trim().is_empty() => {
                Some(normalize_base_url(&u).map_err(|p| config_error("PUBLIC_URL", p))?)
            }
            _ => None,
        };

        Ok(ServiceConfig {
            app: AppCredentials {
                app_id,
                private_key_pem: SecretString::from(pem),
            },
            webhook_secret: SecretString::from(webhook_secret),
            github_api_url,
            host,
            port: self.port,
            data_dir: self.data_dir,
            workers: self.workers,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_seconds),
            public_url,
        })
    }
}

/// Checks that `pem` holds an RSA private key usable for RS256, without ever echoing it.
fn check_rsa_pem(pem: &str) -> Result<(), String> {
    jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes())
        .map(|_| ())
        .map_err(|_| "not an RSA private key in PEM format".to_string())
}

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
