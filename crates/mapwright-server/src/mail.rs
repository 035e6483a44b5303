//! The mail the service sends: the link that confirms a sign-up, and a note to the owner of an
//! address someone asked to sign up with again. A sign-up answers the same whether the address
//! has an account or not; only the mail, which only the address's owner reads, differs.
//!
//! Through SMTP (lettre, rustls) when `serve --smtp-url` is set; otherwise each message is
//! written as an `.eml` file to an outbox folder that the operator reads (the zero-set-up
//! default: a local console's one user is its operator; messages older than two days are
//! deleted from it). Sending runs in the background, a
//! bounded number at once, so a slow mail server neither delays nor tells apart the answers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lettre::message::header::{ContentTransferEncoding, ContentType, HeaderName, HeaderValue};
use lettre::message::{Body, Mailbox};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tokio::sync::Semaphore;

/// Why mail cannot be set up or sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    /// `--smtp-url` is not an SMTP URL lettre understands.
    #[error("invalid SMTP URL (smtp://[USER:PASSWORD@]HOST[:PORT][?tls=required], or smtps://...): {0}")]
    SmtpUrl(lettre::transport::smtp::Error),
    /// `--mail-from` is not a mailbox.
    #[error("invalid sender address {0:?}: give name@domain or \"Name <name@domain>\"")]
    From(String),
    /// The outbox folder cannot be created.
    #[error("cannot create the mail outbox {path}: {source}")]
    Outbox {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The recipient is not an address a message can be sent to.
    #[error("cannot mail {0:?}")]
    To(String),
    /// The message could not be built.
    #[error("cannot build the message: {0}")]
    Build(#[from] lettre::error::Error),
    /// The SMTP server refused or could not be reached.
    #[error("SMTP: {0}")]
    Smtp(#[from] lettre::transport::smtp::Error),
    /// The outbox file could not be written.
    #[error("outbox: {0}")]
    File(#[from] std::io::Error),
}

enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    /// The folder of the `.eml` files (pruned of old messages).
    Outbox(PathBuf),
}

/// How the service sends mail, and the public address its links start with.
pub struct Mailer {
    transport: Transport,
    from: Mailbox,
    public_url: String,
    /// When the outbox was last pruned of messages past [`OUTBOX_MAX_AGE`].
    pruned: std::sync::Mutex<Option<std::time::Instant>>,
    /// Messages being sent at once; past it a message is refused before its caller stores
    /// anything ([`Mailer::reserve`]), never dropped after, nor queued without end.
    in_flight: Arc<Semaphore>,
}

/// Messages sent at once in the background.
const MAX_IN_FLIGHT: usize = 16;

/// Outbox messages older than this are deleted (a sign-up's link holds a day): strangers'
/// sign-ups must not fill the service's disk.
pub const OUTBOX_MAX_AGE: Duration = Duration::from_secs(2 * 24 * 3600);

/// How often the outbox is pruned, at most.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// How long one SMTP exchange may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(20);

impl Mailer {
    /// Mail through the SMTP server of `url` (`smtp://` with STARTTLS when `?tls=required`,
    /// `smtps://` for TLS from the start), from `from`; links start with `public_url`.
    pub fn smtp(url: &str, from: &str, public_url: &str) -> Result<Mailer, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(MailError::SmtpUrl)?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        Mailer::new(Transport::Smtp(transport), from, public_url)
    }

    /// Mail written as `.eml` files to `dir` (created, private to the service's user) instead
    /// of sent: where no SMTP server is set, the operator reads the links there.
    pub fn outbox(dir: &Path, from: &str, public_url: &str) -> Result<Mailer, MailError> {
        create_private_dir(dir).map_err(|source| MailError::Outbox { path: dir.to_owned(), source })?;
        Mailer::new(Transport::Outbox(dir.to_owned()), from, public_url)
    }

    fn new(transport: Transport, from: &str, public_url: &str) -> Result<Mailer, MailError> {
        let from = from.parse::<Mailbox>().map_err(|_| MailError::From(from.to_owned()))?;
        Ok(Mailer {
            transport,
            from,
            public_url: public_url.trim_end_matches('/').to_owned(),
            pruned: std::sync::Mutex::new(None),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        })
    }

    /// The service's address as its users reach it (no trailing slash): links in mail start
    /// with it, never with a request's Host header, which a stranger chooses.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The outbox folder, when mail is written there rather than sent.
    pub fn outbox_dir(&self) -> Option<&Path> {
        match &self.transport {
            Transport::Outbox(dir) => Some(dir),
            Transport::Smtp(_) => None,
        }
    }

    /// Sends a plain-text message now.
    pub async fn send(&self, to: &str, subject: &str, body: String) -> Result<(), MailError> {
        self.send_with_headers(to, subject, body, &[]).await
    }

    /// Sends a plain-text message now with more header fields (`List-Unsubscribe`), each a
    /// name and its value (ASCII; lettre folds long ones only at spaces, so a URL stays whole).
    pub async fn send_with_headers(
        &self,
        to: &str,
        subject: &str,
        body: String,
        headers: &[(&'static str, String)],
    ) -> Result<(), MailError> {
        let to = to.parse::<Mailbox>().map_err(|_| MailError::To(to.to_owned()))?;
        let mut builder =
            Message::builder().from(self.from.clone()).to(to).subject(subject).header(ContentType::TEXT_PLAIN);
        for (name, value) in headers {
            builder = builder.raw_header(HeaderValue::new(HeaderName::new_from_ascii_str(name), value.clone()));
        }
        let message = builder.body(readable_body(body))?;
        match &self.transport {
            Transport::Smtp(smtp) => {
                smtp.send(message).await?;
            }
            Transport::Outbox(dir) => {
                self.prune_outbox(dir);
                let (dir, bytes) = (dir.clone(), message.formatted());
                tokio::task::spawn_blocking(move || write_private_message(&dir, &bytes))
                    .await
                    .map_err(std::io::Error::other)??;
            }
        }
        Ok(())
    }

    /// Deletes messages in `dir` older than [`OUTBOX_MAX_AGE`], at most once per [`PRUNE_EVERY`].
    fn prune_outbox(&self, dir: &Path) {
        {
            let mut last = self.pruned.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|at| at.elapsed() < PRUNE_EVERY) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > OUTBOX_MAX_AGE));
            if old && path.extension().is_some_and(|x| x == "eml") {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// A place among the messages on their way (16 at once), taken before the caller
    /// stores anything the message is for (an invitation, a link's token, a change of
    /// password): so no message is ever dropped after its caller answered success. With none
    /// free, 503 with Retry-After: the caller stores nothing and says the mail was not sent.
    pub fn reserve(self: &Arc<Self>) -> Result<Slot, crate::AppError> {
        match self.in_flight.clone().try_acquire_owned() {
            Ok(permit) => Ok(Slot { mailer: self.clone(), permit }),
            Err(_) => {
                tracing::warn!("mail not accepted: too many messages on their way");
                Err(crate::AppError::Overloaded(
                    "the service has too many messages on their way to send this one now: nothing was done; try \
                     again shortly"
                        .into(),
                    BUSY_RETRY_SECONDS,
                ))
            }
        }
    }
}

/// The seconds a caller refused for want of a place among the messages on their way waits.
const BUSY_RETRY_SECONDS: u64 = 10;

/// A reserved place among the messages on their way ([`Mailer::reserve`]): sending with it
/// never drops the message for want of room.
pub struct Slot {
    mailer: Arc<Mailer>,
    permit: tokio::sync::OwnedSemaphorePermit,
}

impl Slot {
    /// The service's address as its users reach it (see [`Mailer::public_url`]).
    pub fn public_url(&self) -> &str {
        self.mailer.public_url()
    }

    /// Sends in the background: the caller's answer never waits for (or reveals) the mail
    /// server. A failure of the server is logged (the place was taken: the message was not
    /// dropped for want of room).
    pub fn send(self, to: String, subject: &'static str, body: String) {
        let Slot { mailer, permit } = self;
        tokio::spawn(async move {
            let _permit = permit;
            match mailer.send(&to, subject, body).await {
                Ok(()) => match mailer.outbox_dir() {
                    Some(dir) => {
                        tracing::info!(to, subject, outbox = %dir.display(), "mail written to the outbox (no --smtp-url)")
                    }
                    None => tracing::info!(to, subject, "mail sent"),
                },
                Err(e) => tracing::warn!(to, subject, error = %e, "mail not sent"),
            }
        });
    }
}

/// The body as written, in 7 bits, when it is ASCII with lines within SMTP's 998 characters:
/// lettre would choose quoted-printable for any line over 76 (a link is longer), which breaks
/// the link across lines and turns its `=` into `=3D` for an operator reading the outbox.
/// Anything else is left to lettre's choice.
fn readable_body(body: String) -> Body {
    let seven_bit = body.is_ascii() && !body.contains('\0') && body.lines().all(|line| line.len() < 998);
    if !seven_bit {
        return Body::new(body);
    }
    let crlf = body.replace("\r\n", "\n").replace('\n', "\r\n");
    Body::dangerous_pre_encoded(crlf.into_bytes(), ContentTransferEncoding::SevenBit)
}

/// Writes one message as a new `NAME.eml` in `dir` (a random name, never an existing file),
/// readable by the service's user only (0600): it holds a sign-up link, which makes an
/// account for whoever reads it first. (lettre's file transport leaves the mode to the umask.)
fn write_private_message(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let path = dir.join(format!("{}.eml", hex::encode(rand::random::<[u8; 16]>())));
    let mut file = options.open(&path)?;
    file.write_all(bytes)?;
    file.sync_data()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
