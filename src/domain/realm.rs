//! A realm: an instance's public domain (with a port when not the default one), the name every row's `origin` and
//! every peer is known by.

use std::fmt;

/// A realm's name as stored and compared: trimmed, lower case, without a trailing dot.
///
/// The instance's own realm is one (`Service::realm`); whether a row is this realm's own is asked of it
/// ([`Realm::is`]), so that every such comparison normalizes the same way.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Realm(String);

impl Realm {
    /// The realm a name denotes. The name is not validated as a domain here: configuration checks this instance's
    /// realm, and a peer's realm is checked against its actor document before it is stored.
    pub fn from_name(name: &str) -> Realm {
        Realm(name.trim().trim_end_matches('.').to_ascii_lowercase())
    }

    /// The stored name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `origin` (a row's origin, or a realm a peer named) is this realm.
    pub fn is(&self, origin: &str) -> bool {
        origin.trim().trim_end_matches('.').eq_ignore_ascii_case(&self.0)
    }
}

impl fmt::Display for Realm {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl AsRef<str> for Realm {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::Realm;

    #[test]
    fn a_realm_is_its_name_in_any_case_with_or_without_the_trailing_dot() {
        let realm = Realm::from_name(" Acme.Example. ");
        assert_eq!(realm.as_str(), "acme.example");
        assert!(realm.is("acme.example"));
        assert!(realm.is("ACME.example."));
        assert!(!realm.is("acme.example:8443"));
        assert!(!realm.is("other.example"));
        assert_eq!(Realm::from_name("localhost:8080").as_str(), "localhost:8080");
    }
}
