//! `mapwright serve user create`, `serve user password` and `serve admin create`: accounts made
//! (or given a new password) by the operator, on the database of the same settings, with the
//! password read from standard input (asked for without echo on a terminal). The safe way to
//! the first admin: a sign-up never makes one; the way back in for a locked-out user on a
//! server that sends no mail.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};

use super::{AdminCommand, ServeCommand, Settings, UserCommand};

pub fn run(command: &ServeCommand, settings: &Settings) -> anyhow::Result<ExitCode> {
    let (email, admin, reset) = match command {
        ServeCommand::User(UserCommand::Create { email, admin }) => (email, *admin, false),
        ServeCommand::User(UserCommand::Password { email }) => (email, false, true),
        ServeCommand::Admin(AdminCommand::Create { email }) => (email, true, false),
    };
    let email = mapwright_store::normalize_email(email).map_err(|e| anyhow!("{email:?}: {e}"))?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let store = mapwright_store::open(settings.database.as_deref(), &settings.data_dir)
            .await
            .context("cannot open the database")?;
        let result = if reset {
            set_password(store.as_ref(), &email).await
        } else {
            create(store.as_ref(), &email, admin).await
        };
        store.close().await;
        result
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn create(store: &dyn mapwright_store::Store, email: &str, admin: bool) -> anyhow::Result<()> {
    if admin && store.grant_admin(email).await.context("cannot make the admin")? {
        println!("{email} had an account: it is an admin now");
        return Ok(());
    }
    if store.user_credentials(email).await.context("cannot look up the account")?.is_some() {
        bail!("{email} has an account already");
    }
    let password = read_password(email)?;
    if let Some(problem) = mapwright_server::password_problem(&password) {
        bail!("{problem}");
    }
    let hash = mapwright_store::secret::hash_password(&password)?;
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    match store.create_user(email, &hash, admin, now).await {
        Ok(_) => {
            println!("made the {} {email}", if admin { "admin account" } else { "account" });
            Ok(())
        }
        Err(mapwright_store::Error::Conflict(_)) => bail!("{email} has an account already"),
        Err(e) => Err(e).context("cannot make the account"),
    }
}

/// A new password for the account of `email`: every session of it ends, its reset links die.
async fn set_password(store: &dyn mapwright_store::Store, email: &str) -> anyhow::Result<()> {
    let Some((user, _)) = store.user_credentials(email).await.context("cannot look up the account")? else {
        bail!("{email} has no account (make one with `serve user create {email}`)");
    };
    let password = read_password(email)?;
    if let Some(problem) = mapwright_server::password_problem(&password) {
        bail!("{problem}");
    }
    let hash = mapwright_store::secret::hash_password(&password)?;
    store.set_password(user.id, &hash, None).await.context("cannot set the password")?;
    println!("set a new password for {email}; every session of the account was signed out");
    Ok(())
}

/// Twice without echo on a terminal; otherwise the first line of standard input.
fn read_password(email: &str) -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first =
            rpassword::prompt_password(format!("Password for {email}: ")).context("cannot read the password")?;
        let again = rpassword::prompt_password("The same again: ").context("cannot read the password")?;
        if first != again {
            bail!("the two passwords differ");
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).context("cannot read the password from standard input")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
