//! API key scopes: what a key may do. The spec's six plus `admin` for the instance's own operators.

use std::collections::BTreeSet;
use std::fmt;

/// One permission carried by an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Read tools: search, get, compare, whoami, resources.
    Read,
    /// `publish` and `submit_experience`.
    Publish,
    /// `report_usage` (and the usage part of `submit_experience`).
    Usage,
    /// `review`.
    Review,
    /// `rate`.
    Rate,
    /// Moderation of content and actors.
    Moderate,
    /// Administration of the instance.
    Admin,
}

impl Scope {
    /// Every scope, in the order they are listed to users.
    pub const ALL: [Scope; 7] = [
        Scope::Read,
        Scope::Publish,
        Scope::Usage,
        Scope::Review,
        Scope::Rate,
        Scope::Moderate,
        Scope::Admin,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Publish => "publish",
            Scope::Usage => "usage",
            Scope::Review => "review",
            Scope::Rate => "rate",
            Scope::Moderate => "moderate",
            Scope::Admin => "admin",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == name.trim())
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A set of scopes, ordered for stable output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeSet(BTreeSet<Scope>);

impl ScopeSet {
    /// Every scope, as the bootstrap admin key has.
    pub fn all() -> ScopeSet {
        ScopeSet(Scope::ALL.into_iter().collect())
    }

    /// The scopes an ordinary agent key gets when none are named.
    pub fn agent_default() -> ScopeSet {
        ScopeSet(
            [Scope::Read, Scope::Publish, Scope::Usage, Scope::Review, Scope::Rate]
                .into_iter()
                .collect(),
        )
    }

    /// Parses a comma-separated list such as `read,publish`. Returns the first unknown name on failure.
    pub fn parse_list(list: &str) -> Result<ScopeSet, String> {
        let mut scopes = BTreeSet::new();
        for name in list.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            match Scope::parse(name) {
                Some(scope) => {
                    scopes.insert(scope);
                }
                None => return Err(name.to_owned()),
            }
        }
        Ok(ScopeSet(scopes))
    }

    /// Whether the set holds `scope`.
    pub fn contains(&self, scope: Scope) -> bool {
        self.0.contains(&scope)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The scopes in display order.
    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }

    /// The wire names in display order.
    pub fn names(&self) -> Vec<&'static str> {
        self.iter().map(Scope::as_str).collect()
    }

    /// The comma-separated form stored in the database.
    pub fn to_list(&self) -> String {
        self.names().join(",")
    }
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        ScopeSet(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_lists_round_trip_and_reject_unknown_names() {
        let scopes = ScopeSet::parse_list("publish, read,,rate").expect("valid");
        assert_eq!(scopes.to_list(), "read,publish,rate");
        assert_eq!(ScopeSet::parse_list("read,write"), Err("write".to_owned()));
        assert_eq!(ScopeSet::all().names().len(), 7);
    }
}
