//! The one normal form of an e-mail address, in which accounts are stored, looked up and
//! compared (sign-up, sign-in, `serve --admin`).
//!
//! Two spellings of one mailbox must never be two accounts, nor one account and an admin
//! setting that misses it: `Boss@Example.COM`, ` boss@example.com ` and `boss@example.com.`
//! are one address. The normal form: surrounding blank space removed, the local part in ASCII
//! lower case (a non-ASCII local part is refused: its case folding and Unicode normalisation
//! are not something two programs agree on), the domain through IDNA (UTS #46) to lower-case
//! ASCII (`bücher.example` is `xn--bcher-kva.example`) without a trailing dot.

/// Why an address has no normal form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the e-mail address is not valid: {0}")]
pub struct InvalidEmail(pub &'static str);

/// The longest address accepted (RFC 5321's path limit).
const MAX_LEN: usize = 254;

/// The normal form of `text` (see the module documentation), or why it is not an address.
pub fn normalize_email(text: &str) -> Result<String, InvalidEmail> {
    let text = text.trim();
    let (local, domain) = text.rsplit_once('@').ok_or(InvalidEmail("it has no @"))?;
    if local.is_empty() || local.len() > 64 {
        return Err(InvalidEmail("the part before the @ must have 1 to 64 characters"));
    }
    if !local.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(InvalidEmail("the part before the @ must be ASCII letters, digits or punctuation"));
    }
    let domain = domain.strip_suffix('.').unwrap_or(domain);
    if domain.is_empty() || domain.starts_with('[') {
        return Err(InvalidEmail("the part after the @ must be a domain name"));
    }
    let host = url::Host::parse(domain).map_err(|_| InvalidEmail("the part after the @ is not a domain name"))?;
    let url::Host::Domain(domain) = host else {
        return Err(InvalidEmail("the part after the @ must be a domain name, not an IP address"));
    };
    let normal = format!("{}@{domain}", local.to_ascii_lowercase());
    if normal.len() > MAX_LEN {
        return Err(InvalidEmail("it is longer than 254 characters"));
    }
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_normal_form() {
        for spelling in ["boss@example.com", "Boss@Example.COM", "  BOSS@example.com. ", "boss@EXAMPLE.com"] {
            assert_eq!(normalize_email(spelling).as_deref(), Ok("boss@example.com"), "{spelling:?}");
        }
        assert_eq!(normalize_email("ann@Bücher.example").as_deref(), Ok("ann@xn--bcher-kva.example"));
        assert_eq!(normalize_email("a+tag@b").as_deref(), Ok("a+tag@b"));
        for bad in ["", "@example.com", "ann@", "ann", "ännchen@example.com", "a b@example.com", "a@1.2.3.4", "a@[::1]"]
        {
            assert!(normalize_email(bad).is_err(), "{bad:?}");
        }
        assert!(normalize_email(&format!("{}@example.com", "a".repeat(65))).is_err());
    }
}
