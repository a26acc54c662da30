//! URI references (RFC 3986): parsing into components, resolution of a reference against a base
//! URI (section 5.2, with `remove_dot_segments`), recomposition, and the percent-decoding of a
//! fragment. URNs are URIs like any other: `urn:uuid:...` has a scheme and a path, and a
//! fragment-only reference resolves against it as against an `https` URI.

use std::fmt;

/// A URI or URI reference split into its five components (RFC 3986 appendix B). `None` is an
/// absent component, `Some("")` an empty one (`http://a/b?` has an empty query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uri {
    /// `http`, `urn`, ... (absent in a relative reference).
    pub scheme: Option<String>,
    /// The authority after `//`.
    pub authority: Option<String>,
    /// The path (possibly empty).
    pub path: String,
    /// The query after `?`.
    pub query: Option<String>,
    /// The fragment after `#`.
    pub fragment: Option<String>,
}

impl Uri {
    /// Splits `text` into its components. Any string is a URI reference in this reading; a
    /// scheme is recognized only when it is well formed (`ALPHA *( ALPHA / DIGIT / "+" / "-" /
    /// "." )` before the first `:`, with no `/`, `?` or `#` before it).
    pub fn parse(text: &str) -> Uri {
        let (rest, fragment) = match text.split_once('#') {
            Some((r, f)) => (r, Some(f.to_owned())),
            None => (text, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_owned())),
            None => (rest, None),
        };
        let (scheme, rest) = match rest.split_once(':') {
            Some((s, r)) if is_scheme(s) => (Some(s.to_owned()), r),
            _ => (None, rest),
        };
        let (authority, path) = match rest.strip_prefix("//") {
            Some(after) => {
                let end = after.find('/').unwrap_or(after.len());
                (Some(after[..end].to_owned()), after[end..].to_owned())
            }
            None => (None, rest.to_owned()),
        };
        Uri {
            scheme,
            authority,
            path,
            query,
            fragment,
        }
    }

    /// Whether this is an absolute URI (it has a scheme).
    pub fn is_absolute(&self) -> bool {
        self.scheme.is_some()
    }

    /// The reference `reference` resolved against this base URI (RFC 3986 section 5.2.2, the
    /// strict algorithm: a reference with a scheme is taken as it is).
    pub fn resolve(&self, reference: &str) -> Uri {
        let r = Uri::parse(reference);
        if r.scheme.is_some() {
            Uri {
                path: remove_dot_segments(&r.path),
                ..r
            }
        } else if r.authority.is_some() {
            Uri {
                scheme: self.scheme.clone(),
                path: remove_dot_segments(&r.path),
                ..r
            }
        } else if r.path.is_empty() {
            Uri {
                scheme: self.scheme.clone(),
                authority: self.authority.clone(),
                path: self.path.clone(),
                query: r.query.or_else(|| self.query.clone()),
                fragment: r.fragment,
            }
        } else {
            let path = if r.path.starts_with('/') {
                remove_dot_segments(&r.path)
            } else {
                remove_dot_segments(&self.merge(&r.path))
            };
            Uri {
                scheme: self.scheme.clone(),
                authority: self.authority.clone(),
                path,
                query: r.query,
                fragment: r.fragment,
            }
        }
    }

    /// Section 5.2.3: the reference's path appended to this base's path without its last segment.
    fn merge(&self, path: &str) -> String {
        if self.authority.is_some() && self.path.is_empty() {
            return format!("/{path}");
        }
        match self.path.rfind('/') {
            Some(i) => format!("{}{path}", &self.path[..=i]),
            None => path.to_owned(),
        }
    }

    /// This URI without its fragment.
    pub fn without_fragment(&self) -> Uri {
        Uri {
            fragment: None,
            ..self.clone()
        }
    }

    /// The form URIs are compared in: scheme and host in lower case (RFC 3986 section 6.2.2.1),
    /// no fragment; an empty fragment (`$id: "...#"`) is the same resource.
    pub fn normalized(&self) -> String {
        let scheme = self.scheme.as_ref().map(|s| s.to_ascii_lowercase());
        let authority = self.authority.as_ref().map(|a| match a.rsplit_once('@') {
            Some((user, host)) => format!("{user}@{}", host.to_ascii_lowercase()),
            None => a.to_ascii_lowercase(),
        });
        Uri {
            scheme,
            authority,
            fragment: None,
            ..self.clone()
        }
        .to_string()
    }
}

/// Section 5.3: the components recomposed.
impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheme {
            write!(f, "{s}:")?;
        }
        if let Some(a) = &self.authority {
            write!(f, "//{a}")?;
        }
        f.write_str(&self.path)?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        if let Some(fr) = &self.fragment {
            write!(f, "#{fr}")?;
        }
        Ok(())
    }
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Section 5.2.4: `.` and `..` segments removed from a path.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path;
    let mut out = String::new();
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../") {
            input = rest;
        } else if let Some(rest) = input.strip_prefix("./") {
            input = rest;
        } else if input.starts_with("/./") {
            input = &input[2..];
        } else if input == "/." {
            input = "/";
        } else if input.starts_with("/../") || input == "/.." {
            input = if input == "/.." { "/" } else { &input[3..] };
            match out.rfind('/') {
                Some(i) => out.truncate(i),
                None => out.clear(),
            }
        } else if input == "." || input == ".." {
            input = "";
        } else {
            let start = usize::from(input.starts_with('/'));
            let end = input[start..].find('/').map_or(input.len(), |i| i + start);
            out.push_str(&input[..end]);
            input = &input[end..];
        }
    }
    out
}

/// The fragment `text` with its percent-encoded octets decoded (RFC 3986 section 2.1), as UTF-8;
/// `Err` names what is wrong.
pub fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(b) = hex else {
                return Err(format!(
                    "`%` at byte {i} does not start a percent-encoded octet (`%` and two hex digits)"
                ));
            };
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the percent-encoded octets are not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::{percent_decode, Uri};

    /// RFC 3986 section 5.4: every normal and abnormal example, against its base URI.
    #[test]
    fn resolves_the_rfc_3986_examples() {
        let base = Uri::parse("http://a/b/c/d;p?q");
        let examples = [
            // 5.4.1 normal examples
            ("g:h", "g:h"),
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"),
            ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"),
            ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../", "http://a/"),
            ("../../g", "http://a/g"),
            // 5.4.2 abnormal examples
            ("../../../g", "http://a/g"),
            ("../../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            (".g", "http://a/b/c/.g"),
            ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"),
            ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"),
            ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g#s/./x"),
            ("g#s/../x", "http://a/b/c/g#s/../x"),
            ("http:g", "http:g"),
        ];
        for (reference, expected) in examples {
            assert_eq!(base.resolve(reference).to_string(), expected, "{reference}");
        }
    }

    #[test]
    fn resolves_against_urns() {
        let urn = Uri::parse("urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed");
        assert_eq!(urn.scheme.as_deref(), Some("urn"));
        assert_eq!(urn.path, "uuid:deadbeef-1234-ffff-ffff-4321feebdaed");
        assert_eq!(
            urn.resolve("#/$defs/bar").to_string(),
            "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/bar"
        );
        assert_eq!(
            urn.resolve("#something").to_string(),
            "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#something"
        );
        assert_eq!(
            urn.resolve("urn:uuid:other#/a").to_string(),
            "urn:uuid:other#/a"
        );
        // RFC 8141 r- and q-components are a query: a fragment keeps them.
        for id in [
            "urn:example:foo-bar-baz-qux?+CCResolve:cc=uk",
            "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
            "urn:example:1/406/47452/2",
        ] {
            let base = Uri::parse(id);
            assert_eq!(base.to_string(), id);
            assert_eq!(
                base.resolve("#/$defs/bar").to_string(),
                format!("{id}#/$defs/bar")
            );
        }
        // A relative path merges with the URN's path like with any other path.
        assert_eq!(
            Uri::parse("urn:example:1/406/47452/2")
                .resolve("x")
                .to_string(),
            "urn:example:1/406/47452/x"
        );
    }

    #[test]
    fn resolves_the_schema_set_shapes() {
        let base = Uri::parse("https://agh.dev/schemas/network/v0/body/say.schema.json");
        assert_eq!(
            base.resolve("../defs.schema.json#/$defs/text").to_string(),
            "https://agh.dev/schemas/network/v0/defs.schema.json#/$defs/text"
        );
        assert_eq!(
            base.resolve("trace.schema.json").to_string(),
            "https://agh.dev/schemas/network/v0/body/trace.schema.json"
        );
        let file = Uri::parse("file:///c:/folder/file.json");
        assert_eq!(
            file.resolve("#/$defs/foo").to_string(),
            "file:///c:/folder/file.json#/$defs/foo"
        );
        assert_eq!(
            Uri::parse("http://example.com/ref/absref.json")
                .resolve("/absref/foobar.json")
                .to_string(),
            "http://example.com/absref/foobar.json"
        );
        // Only a well-formed scheme is one: `1x:y` is a relative path.
        assert_eq!(Uri::parse("1x:y").scheme, None);
        assert!(!Uri::parse("node").is_absolute());
    }

    #[test]
    fn compares_scheme_and_host_case_blind_without_fragment() {
        assert_eq!(
            Uri::parse("HTTP://Example.COM/A.json#").normalized(),
            "http://example.com/A.json"
        );
        assert_eq!(Uri::parse("urn:X:Y#frag").normalized(), "urn:X:Y");
    }

    #[test]
    fn decodes_percent_encoded_fragments() {
        assert_eq!(
            percent_decode("/$defs/percent%25field").as_deref(),
            Ok("/$defs/percent%field")
        );
        assert_eq!(
            percent_decode("/$defs/foo%22bar").as_deref(),
            Ok("/$defs/foo\"bar")
        );
        assert_eq!(percent_decode("/caf%C3%A9").as_deref(), Ok("/café"));
        assert!(percent_decode("/%zz").is_err());
        assert!(percent_decode("/%2").is_err());
        assert!(percent_decode("/%ff").is_err());
    }
}
