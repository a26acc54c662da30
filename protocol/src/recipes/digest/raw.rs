//! The digest on the parser's fast path: from a checked document's JSON text and the fields
//! its generated scanner kept, without building values.

use super::*;

/// The covered members (and the carried digest) of a checked capability document as JSON text,
/// without building a tree: kept by the generated fields scanner ([`RawDocument::of_fields`]) or
/// found in one walk over the text ([`RawDocument::read`]). Strings are decoded only when they
/// have escapes or Go would escape them ([`Text::of_json`]); lists are read item by item when
/// they are written, unless their text is canonical already.
pub(super) struct RawDocument<'a> {
    /// `DIGEST_MEMBERS[i]` (`None`: absent or `null`), then `digest`.
    pub(super) members: [Option<RawJson<'a>>; DIGEST_MEMBERS.len() + 1],
}

impl<'a> RawDocument<'a> {
    pub(super) fn read(doc: RawJson<'a>) -> Self {
        let mut d = RawDocument {
            members: [None; DIGEST_MEMBERS.len() + 1],
        };
        crate::scan::each_member(doc, |name, s| {
            let i = match name {
                DIGEST_MEMBER => DIGEST_MEMBERS.len(),
                _ => DIGEST_MEMBERS.iter().position(|m| *m == name)?,
            };
            let value = s.raw_checked()?;
            *d.members.get_mut(i)? = (!value.is_null()).then_some(value);
            Some(true)
        });
        d
    }

    /// The members a generated fields scanner kept while it read the document, when they are
    /// `CapabilityDocument`'s (in its schema order): nothing is looked for again.
    pub(super) fn of_fields(fields: &Fields<'a>) -> Option<Self> {
        let names = fields.names();
        if !(std::ptr::eq(names, &CAPABILITY_DOCUMENT_FIELDS[..])
            || names == CAPABILITY_DOCUMENT_FIELDS)
        {
            return None;
        }
        let mut d = RawDocument {
            members: [None; DIGEST_MEMBERS.len() + 1],
        };
        for (slot, &at) in d.members.iter_mut().zip(&FIELD_AT) {
            *slot = fields.value(at).filter(|v| !v.is_null());
        }
        Some(d)
    }

    /// Member `DIGEST_MEMBERS[member]` (or `digest`) as a string: `None` when absent or `null`,
    /// `Err` when not a string.
    pub(super) fn text(&self, member: usize) -> Result<Option<Text<'a>>, ()> {
        match self.members.get(member).copied().flatten() {
            None => Ok(None),
            Some(v) if v.get().starts_with('"') => Text::of_json(v.get()).map(Some).ok_or(()),
            Some(_) => Err(()),
        }
    }

    pub(super) fn list(&self, member: usize) -> Option<RawJson<'a>> {
        self.members
            .get(member)
            .copied()
            .flatten()
            .filter(|_| member >= FIRST_LIST)
    }
}

impl<'a> Covered<'a> for RawDocument<'a> {
    fn string(&self, member: usize) -> Result<Option<Text<'a>>, ()> {
        if member < FIRST_LIST {
            self.text(member)
        } else {
            Ok(None)
        }
    }

    fn items(&self, member: usize, mut each: impl FnMut(Text<'a>)) -> Result<(), ()> {
        let Some(list) = self.list(member) else {
            return Ok(());
        };
        let mut s = Scanner::new(list.get(), usize::MAX);
        let mut arr = s.array().ok_or(())?;
        while s.item(&mut arr).ok_or(())? {
            if s.peek() != Some(b'"') {
                return Err(());
            }
            let raw = s.raw_checked().ok_or(())?;
            each(Text::of_json(raw.get()).ok_or(())?);
        }
        Ok(())
    }

    fn canonical_list(&self, member: usize) -> Option<&'a str> {
        let text = self.list(member)?.get();
        canonical_list(text, member == REQUIREMENTS).then_some(text)
    }
}

/// Whether `carried` is `sha256:` and the lowercase hex of `hash`.
pub(super) fn is_digest_of(carried: &str, hash: &[u8; 32]) -> bool {
    let mut hex = [[0u8; 2]; 32];
    for (pair, &b) in hex.iter_mut().zip(hash) {
        *pair = crate::recipes::identity::HEX_PAIRS[usize::from(b)];
    }
    let hex = hex.as_flattened();
    carried.strip_prefix(DIGEST_PREFIX).map(str::as_bytes) == Some(hex)
}

/// SHA-256 of a canonical text written from a document's JSON text. Runs of the canonical text
/// that stand in the document byte for byte (a compact document in canonical member order is
/// one run up to its `digest`) are hashed as one slice of the document, not piece by piece: a
/// piece extends the current run when it is the text that follows the run, or equal to it.
pub(super) struct Spans<'t> {
    text: &'t [u8],
    /// The current run, `text[start..end]`, not hashed yet.
    start: usize,
    end: usize,
    hash: Sha256,
}

impl<'t> Spans<'t> {
    fn new(text: &'t str) -> Self {
        Spans {
            text: text.as_bytes(),
            start: 0,
            end: 0,
            hash: Sha256::new(),
        }
    }

    fn flush(&mut self) {
        self.hash
            .update(self.text.get(self.start..self.end).unwrap_or_default());
    }

    fn finish(mut self) -> [u8; 32] {
        self.flush();
        self.hash.finalize().into()
    }
}

impl Sink for Spans<'_> {
    #[inline(always)]
    fn put(&mut self, s: &str) {
        let s = s.as_bytes();
        let end = self.end + s.len();
        let follows = self
            .text
            .get(self.end..end)
            .is_some_and(|next| std::ptr::eq(next.as_ptr(), s.as_ptr()) || next == s);
        if follows {
            self.end = end;
            return;
        }
        self.flush();
        // A piece of the document starts a new run; any other is hashed as it is.
        let offset = (s.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        if offset
            .checked_add(s.len())
            .is_some_and(|e| e <= self.text.len())
        {
            self.start = offset;
            self.end = offset + s.len();
        } else {
            self.hash.update(s);
            self.start = self.end;
        }
    }
}

/// Whether a capability document, given as checked JSON text (the parser's fast path), carries
/// its canonical digest. The canonical text is the one [`DigestInput::digest`] hashes (one
/// writer for both), streamed into the hash; [`verify`] says what is wrong when this is `false`.
pub fn verify_raw(doc: RawJson<'_>) -> bool {
    verify_fields(doc, None)
}

/// [`verify_raw`] with the document's declared members as the generated fields scanner
/// (`scan_capability_document_fields`) kept them, so they are not looked for again; without
/// them (or with another type's), the members are read from the text.
pub fn verify_fields(doc: RawJson<'_>, fields: Option<&Fields<'_>>) -> bool {
    let d = fields
        .and_then(RawDocument::of_fields)
        .unwrap_or_else(|| RawDocument::read(doc));
    let Ok(Some(carried)) = d.text(DIGEST_MEMBERS.len()) else {
        return false;
    };
    if let Some(run) = canonical_run(doc.get(), &d.members[..DIGEST_MEMBERS.len()]) {
        let mut hash = Sha256::new();
        hash.update(run.as_bytes());
        hash.update(b"}");
        return is_digest_of(carried.value(), &hash.finalize().into());
    }
    let mut hashing = Spans::new(doc.get());
    write_canonical(&d, &mut hashing).is_ok() && is_digest_of(carried.value(), &hashing.finish())
}
