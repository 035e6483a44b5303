//! E-mail alerts, what the JSON API and the console share: the unsubscribe link's token (it
//! needs no session). The mail itself is sent by the alert job ([`crate::jobs::alerts`]).

use mapwright_store::AlertLink;

use crate::{AppError, AppState};

/// The link of a token (after turning its alerts on or off when `enabled` is given), or 404;
/// the API's and the console's one path.
pub async fn link(state: &AppState, token: &str, enabled: Option<bool>) -> Result<AlertLink, AppError> {
    let token = token.trim();
    // A token is 64 hexadecimal digits: anything else is no mail's, asked of no database.
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AppError::NotFound);
    }
    state.store.alert_link(token, enabled).await?.ok_or(AppError::NotFound)
}
