//! Run metadata for the JSON companion: the options as given and the
//! program's own `DR_HOOK_META=key=value,...` pairs (what Adiak records for
//! Caliper), so that tools comparing runs (Thicket) can tell them apart.

use super::env;
use super::options::Warning;

/// What the JSON companion's `metadata` carries from the environment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    /// `DR_HOOK_OPT` as given (empty when unset).
    pub options: String,
    /// `DR_HOOK_META`'s pairs, in order; a key given twice keeps its last
    /// value.
    pub pairs: Vec<(String, String)>,
}

impl Meta {
    /// Reads `DR_HOOK_OPT` and `DR_HOOK_META`; an item without `=` or with
    /// an empty key is left out with a warning.
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<String>, warnings: &mut Vec<Warning>) -> Meta {
        let options = get(env::DR_HOOK_OPT).unwrap_or_default();
        let raw = get(env::DR_HOOK_META).unwrap_or_default();
        let (pairs, bad) = parse_pairs(&raw);
        for b in bad {
            warnings.push(Warning(format!(
                "{}: {b:?} is not key=value; left out",
                env::DR_HOOK_META
            )));
        }
        Meta { options, pairs }
    }
}

/// Splits `key=value` items separated by `,` or `;` (blanks around keys
/// and values trimmed); returns the pairs and the items that are not pairs.
pub fn parse_pairs(raw: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut bad = Vec::new();
    for item in raw
        .split([',', ';'])
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let (k, v) = (k.trim().to_string(), v.trim().to_string());
                pairs.retain(|(old, _)| *old != k);
                pairs.push((k, v));
            }
            _ => bad.push(item.to_string()),
        }
    }
    (pairs, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_split_trimmed_and_the_last_value_wins() {
        let (p, bad) = parse_pairs(" case = t255 ;grid=O96, case=t639,oops,=x");
        assert_eq!(
            p,
            vec![
                ("grid".to_string(), "O96".to_string()),
                ("case".to_string(), "t639".to_string())
            ]
        );
        assert_eq!(bad, vec!["oops".to_string(), "=x".to_string()]);
    }
}
