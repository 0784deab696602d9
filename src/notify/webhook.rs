//! `[notify] webhook`: a POST of the gate's notice, as JSON, a Slack
//! message or an ntfy message, through `ureq` with a time limit for the
//! whole exchange and at most [`MAX_REDIRECTS`] redirects.
//!
//! `http://` and `https://` URLs are taken (TLS by rustls, certificates
//! checked against the webpki roots); anything else is refused when the
//! config is read, never at the moment a gate opens.

use std::time::Duration;

use serde::Deserialize;

use super::GateNotice;

/// Redirects followed before giving up (a 3xx loop ends here).
pub const MAX_REDIRECTS: u32 = 3;

/// What the POST carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// The notice as JSON (the same object `on_human_gate` gets on stdin).
    #[default]
    Json,
    /// `{"text": "..."}` for a Slack incoming webhook.
    Slack,
    /// A plain-text body with a `Title` header, for an ntfy topic URL.
    Ntfy,
}

/// A checked webhook.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    url: String,
    format: WebhookFormat,
    timeout: Duration,
}

/// Why a webhook URL is refused or a POST failed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// Not an http(s) URL at all.
    #[error("'{0}' is not an http:// or https:// URL")]
    NotHttp(String),
    /// Not a URL ureq can read.
    #[error("'{url}' is not a valid URL: {message}")]
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The POST failed (unreachable, timed out, too many redirects, I/O).
    #[error("POST {url}: {message}")]
    Send {
        /// The URL.
        url: String,
        /// What happened.
        message: String,
    },
    /// The server answered, but not with success.
    #[error("POST {url}: the server answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
}

impl Webhook {
    /// A webhook on `url` (http or https), checked now.
    pub fn new(url: &str, format: WebhookFormat, timeout: Duration) -> Result<Self, WebhookError> {
        let url = url.trim();
        let lower = url.to_ascii_lowercase();
        if !lower.starts_with("http://") && !lower.starts_with("https://") {
            return Err(WebhookError::NotHttp(url.into()));
        }
        let uri: ureq::http::Uri =
            url.parse()
                .map_err(|e: ureq::http::uri::InvalidUri| WebhookError::BadUrl {
                    url: url.into(),
                    message: e.to_string(),
                })?;
        if uri.host().is_none_or(str::is_empty) {
            return Err(WebhookError::BadUrl {
                url: url.into(),
                message: "no host".into(),
            });
        }
        Ok(Webhook {
            url: url.into(),
            format,
            timeout,
        })
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The POST's content type and body for a notice.
    pub fn body(&self, notice: &GateNotice) -> (&'static str, String) {
        match self.format {
            WebhookFormat::Json => (
                "application/json",
                serde_json::to_string(notice).unwrap_or_default(),
            ),
            WebhookFormat::Slack => (
                "application/json",
                serde_json::json!({ "text": notice.text() }).to_string(),
            ),
            WebhookFormat::Ntfy => ("text/plain; charset=utf-8", notice.text()),
        }
    }

    /// POSTs the notice; blocks at most the timeout. Returns the status.
    pub fn send(&self, notice: &GateNotice) -> Result<u16, WebhookError> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .max_redirects(MAX_REDIRECTS)
            .http_status_as_error(false)
            .user_agent(concat!("loopwatch/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let (content_type, body) = self.body(notice);
        let mut req = agent.post(&self.url).header("Content-Type", content_type);
        if self.format == WebhookFormat::Ntfy {
            req = req
                .header(
                    "Title",
                    ascii_header(&format!("loopwatch: {} waits", notice.id)),
                )
                .header("Tags", "warning");
        }
        let send_err = |e: ureq::Error| WebhookError::Send {
            url: self.url.clone(),
            message: match e {
                ureq::Error::TooManyRedirects => {
                    format!("more than {MAX_REDIRECTS} redirects (a redirect loop?)")
                }
                ureq::Error::RedirectFailed => {
                    "the server redirected and the redirect could not be followed".into()
                }
                ureq::Error::Timeout(_) => {
                    format!("no answer within {} s", self.timeout.as_secs_f64())
                }
                other => other.to_string(),
            },
        };
        let resp = req.send(body.as_bytes()).map_err(send_err)?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            Ok(status)
        } else {
            Err(WebhookError::Status {
                url: self.url.clone(),
                status,
            })
        }
    }
}

/// A header value of printable ASCII only.
fn ascii_header(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_are_taken() {
        let t = Duration::from_secs(1);
        let f = WebhookFormat::Json;
        assert!(Webhook::new("http://127.0.0.1:9/hook", f, t).is_ok());
        assert!(Webhook::new("https://hooks.example/x", f, t).is_ok());
        assert!(Webhook::new("HTTPS://ntfy.example/topic", f, t).is_ok());
        for bad in [
            "ftp://x/y",
            "file:///etc/passwd",
            "127.0.0.1:80",
            "javascript:alert(1)",
        ] {
            assert!(
                matches!(Webhook::new(bad, f, t), Err(WebhookError::NotHttp(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Webhook::new("http://", f, t),
            Err(WebhookError::BadUrl { .. })
        ));
    }
}
