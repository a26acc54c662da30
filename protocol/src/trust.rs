//! The baseline trust profile `agh-network.trust.ed25519-jcs/v1` ("Verified Peer"): Ed25519
//! signatures over the RFC 8785 canonical form of the envelope, and `nickname@fingerprint`
//! identities. The one place its verification recipe lives (the schemas name it with
//! `x-agh-trust` on the envelope's `proof` member and give the proof object's shape).
//!
//! Every envelope gets a [`TrustState`], evaluated after freshness and before routing:
//! - `verified`: a proof of this profile that passes every [`Step`];
//! - `unverified`: no proof (absent or `null`) and `from` not in the verified form, or a proof of
//!   another profile, or one naming no profile (v0: receivers MUST NOT require proof processing;
//!   the seed pages win over the profile's "malformed proof" there), with a `from` not in the
//!   verified form;
//! - `rejected`: a proof of this profile that fails a step (its shape included), a `proof` that
//!   is not an object, a `profile` member that is no identifier (`""`, a number: a malformed
//!   proof), a verified-form `from` without a proof this receiver can check (the proof-stripping
//!   defence; stricter than the profile's text for another profile's proof: nothing here vouches
//!   for that identity), or the local policy ([`TrustPolicy::VerifiedOnly`]). A rejected
//!   envelope is refused with `verification_failed`.
//!
//! The steps run in the profile's order and the first failing one is reported: a problem of a
//! member a later step reads (a padded `sig`, say) never hides an earlier step's failure. Where
//! TRUST.md puts a check: an invalid or small-order `pubkey` fails step 8 (strict verification
//! decodes the key and refuses small-order keys; step 3 asks only for 32 bytes).
//!
//! base64url (RFC 4648 section 5) is read without padding, as JOSE writes it: a padded value, or
//! one whose unused trailing bits are not zero, is refused (one spelling per key and signature).
//!
//! What it gives: integrity of every signed member and a self-certified sender identity (the
//! fingerprint is the key). What it does not: confidentiality, key revocation, or any tie between
//! a key and a person.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The name of this module's verification recipe, as `x-agh-trust` names it in the schemas.
pub const RECIPE: &str = "ed25519-jcs";

/// The profile identifier (`proof.profile`): the schemas' (`x-agh-trust` on the envelope's
/// `proof`, the entry whose recipe is [`RECIPE`]; a test holds them together).
pub const PROFILE: &str = crate::generated::TRUST_PROFILES[0].profile;
/// The signature algorithm (`proof.alg`).
pub const ALG: &str = "Ed25519";
/// The NATS subject prefix of the profile (v0's is `agh.network.v0`).
pub const SUBJECT_PREFIX: &str = "agh.network.v1";
/// The members of a proof of this profile, in the order they are written.
pub const PROOF_MEMBERS: [&str; 5] = ["profile", "alg", "key_id", "pubkey", "sig"];

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A verification step, in the profile's order (any failure: `rejected`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// With step 1: `proof` is an object, and one of this profile has exactly its five members
    /// (`profile`, `alg`, `key_id`, `pubkey`, `sig`); checked after [`Step::Profile`].
    ProofShape,
    /// 1. `proof.profile` is this profile (a `profile` that is no identifier at all, `""` or a
    ///    number, is a malformed proof: refused here).
    Profile,
    /// 2. `proof.alg` is `Ed25519`.
    Algorithm,
    /// 3. `pubkey` is unpadded base64url of 32 bytes (whether they encode a curve point is
    ///    step 8's: RFC 8032 verification decodes the key).
    PublicKey,
    /// 4-5. `key_id` is `sha256:` and the 64 hex of SHA-256(pubkey).
    KeyId,
    /// 6. The fingerprint in `from` is the first 32 hex of SHA-256(pubkey).
    Fingerprint,
    /// 7. The envelope without `proof.sig` has a canonical (JCS) form.
    Canonical,
    /// 8. The signature verifies strictly over those bytes: `sig` is unpadded base64url of 64
    ///    bytes, `R` and `pubkey` are curve points of more than small order, `S` is canonical.
    Signature,
    /// A verified-form `from` without a proof this receiver can check.
    ProofStripped,
    /// The receiver's policy refuses unverified envelopes.
    Policy,
}

impl Step {
    /// The step's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Step::ProofShape => "proof_shape",
            Step::Profile => "profile",
            Step::Algorithm => "alg",
            Step::PublicKey => "pubkey",
            Step::KeyId => "key_id",
            Step::Fingerprint => "fingerprint",
            Step::Canonical => "canonical_json",
            Step::Signature => "signature",
            Step::ProofStripped => "proof_stripped",
            Step::Policy => "policy",
        }
    }

    /// The JSON Pointer of the member the step reads.
    pub const fn pointer(self) -> &'static str {
        match self {
            Step::ProofShape | Step::Canonical => "/proof",
            Step::Profile => "/proof/profile",
            Step::Algorithm => "/proof/alg",
            Step::PublicKey => "/proof/pubkey",
            Step::KeyId => "/proof/key_id",
            Step::Fingerprint | Step::ProofStripped => "/from",
            Step::Signature => "/proof/sig",
            Step::Policy => "",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The trust state of one envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustState {
    /// Signed by the key whose fingerprint `from` carries.
    Verified {
        /// The sender's fingerprint (32 hex).
        fingerprint: String,
    },
    /// Not signed with this profile (no proof, or another profile's).
    Unverified {
        /// Why (`no proof`, or the other profile); borrowed when it is a fixed text, so that the
        /// common case costs no allocation per message.
        reason: std::borrow::Cow<'static, str>,
    },
    /// Refused with `verification_failed`.
    Rejected {
        /// The step that failed.
        step: Step,
        /// Why.
        message: String,
    },
}

impl TrustState {
    /// `verified`, `unverified` or `rejected`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TrustState::Verified { .. } => "verified",
            TrustState::Unverified { .. } => "unverified",
            TrustState::Rejected { .. } => "rejected",
        }
    }

    /// Whether the state is `verified`.
    pub fn is_verified(&self) -> bool {
        matches!(self, TrustState::Verified { .. })
    }

    fn rejected(step: Step, message: impl Into<String>) -> TrustState {
        TrustState::Rejected {
            step,
            message: message.into(),
        }
    }
}

impl fmt::Display for TrustState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrustState::Verified { fingerprint } => write!(f, "verified ({fingerprint})"),
            TrustState::Unverified { reason } => write!(f, "unverified ({reason})"),
            TrustState::Rejected { step, message } => {
                write!(f, "rejected at step {step}: {message}")
            }
        }
    }
}

/// What a receiver accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrustPolicy {
    /// Verified and unverified envelopes (rejected ones never).
    #[default]
    AcceptUnverified,
    /// Verified envelopes only: an unverified one is rejected (step [`Step::Policy`]).
    VerifiedOnly,
}

impl TrustPolicy {
    /// Applies the policy to a state.
    pub fn apply(self, state: TrustState) -> TrustState {
        match self.refusal(&state) {
            Some((step, message)) => TrustState::rejected(step, message),
            None => state,
        }
    }

    /// Why a message in `state` does not pass the policy: the step and the text of the
    /// `rejected` state [`TrustPolicy::apply`] gives it; `None` when it passes (nothing copied
    /// or written then).
    #[inline]
    pub fn refusal(self, state: &TrustState) -> Option<(Step, Cow<'_, str>)> {
        match (self, state) {
            (_, TrustState::Rejected { step, message }) => Some((*step, Cow::Borrowed(message))),
            (TrustPolicy::VerifiedOnly, TrustState::Unverified { reason }) => {
                Some((Step::Policy, Cow::Owned(verified_only(reason))))
            }
            _ => None,
        }
    }
}

/// Why [`TrustPolicy::VerifiedOnly`] turns away an unverified envelope (out of the receiver's
/// path).
#[cold]
#[inline(never)]
fn verified_only(reason: &str) -> String {
    format!("this receiver accepts verified envelopes only ({reason})")
}

/// `nickname@fingerprint`: nickname `[a-z0-9_-]{1,32}`, fingerprint 32 lowercase hex.
pub fn split_verified_id(peer_id: &str) -> Option<(&str, &str)> {
    let (nickname, fingerprint) = peer_id.split_once('@')?;
    let nick_ok = (1..=32).contains(&nickname.len())
        && nickname
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'));
    let fp_ok = fingerprint.len() == 32
        && fingerprint
            .bytes()
            .all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9'));
    (nick_ok && fp_ok).then_some((nickname, fingerprint))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The 64 hex of SHA-256 of a public key.
pub fn key_digest_hex(public_key: &[u8; 32]) -> String {
    hex(&Sha256::digest(public_key))
}

/// Whether the envelope carries a proof or a verified-form `from` (only then is there anything
/// to evaluate; every other envelope is `unverified`, cheaply).
pub fn needs_evaluation(from: &str, has_proof: bool) -> bool {
    has_proof || from.contains('@')
}

/// The trust state of an envelope (its members as received).
///
/// Which proofs are this profile's: the `profile` member decides. Absent (or `null`): the proof
/// names no profile, so it is no proof of any (the seed pages win over TRUST.md's "malformed
/// proof object" here: v0's `proof` is any object and v0 receivers MUST NOT require proof
/// processing; fixture `core.envelope/accept_proof_object`). A non-empty string other than this
/// profile's identifier: another, well-formed profile (`unverified`). Any other value (`""`, a
/// number, an object): a proof naming a profile with no well-formed identifier, a malformed
/// proof object (TRUST.md): `rejected` at step 1, [`Step::Profile`].
pub fn evaluate(envelope: &Map<String, Value>) -> TrustState {
    let from = envelope.get("from").and_then(Value::as_str).unwrap_or("");
    let verified_from = split_verified_id(from).is_some();
    // No proof this receiver can check: unverified, except under a verified-form `from` (the
    // proof-stripping defence).
    let unchecked = |why: &str| match verified_from {
        true => TrustState::rejected(
            Step::ProofStripped,
            format!("`from` `{from}` is a verified identity but {why}"),
        ),
        false => TrustState::Unverified {
            reason: why.to_owned().into(),
        },
    };
    let proof = match envelope.get("proof") {
        None | Some(Value::Null) => {
            return match verified_from {
                true => unchecked("the envelope has no proof"),
                false => TrustState::Unverified {
                    reason: "no proof".into(),
                },
            }
        }
        Some(Value::Object(p)) => p,
        Some(_) => return TrustState::rejected(Step::ProofShape, "`proof` is not an object"),
    };
    match proof.get("profile") {
        None | Some(Value::Null) => unchecked("the proof names no profile"),
        Some(Value::String(p)) if p == PROFILE => verify_proof(envelope, proof, from),
        Some(Value::String(p)) if !p.is_empty() => unchecked(&format!(
            "the proof is of profile `{p}`, which this receiver does not support"
        )),
        Some(other) => TrustState::rejected(
            Step::Profile,
            format!(
                "`proof.profile` is {other}, not a profile identifier (a non-empty string): a \
                 malformed proof"
            ),
        ),
    }
}

/// The position of a step in the profile's order (the proof's closed shape belongs to step 1:
/// the object of this profile has exactly its five members).
const fn order(step: Step) -> u8 {
    match step {
        Step::Profile => 1,
        Step::ProofShape => 2,
        Step::Algorithm => 3,
        Step::PublicKey => 4,
        Step::KeyId => 5,
        Step::Fingerprint => 6,
        Step::Canonical => 7,
        Step::Signature => 8,
        Step::ProofStripped | Step::Policy => 9,
    }
}

fn verify_proof(
    envelope: &Map<String, Value>,
    proof: &Map<String, Value>,
    from: &str,
) -> TrustState {
    // The shape and the spelling of each member are the schema's (`TrustProof`,
    // trust-proof.schema.json), checked by its generated validator. Each problem belongs to the
    // step that reads its member (a missing `sig` or a padded one: step 8); the earliest is
    // reported when the steps reach it, so a later step's member never hides an earlier failure.
    let mut problems = crate::Problems::all();
    let mut at = String::from("/proof");
    let proof_type = crate::generated::TRUST_PROFILES[0].proof_type;
    match crate::generated::checks::NAMED_CHECKS
        .iter()
        .find(|(name, _)| *name == proof_type)
    {
        Some((_, check)) => check(&Value::Object(proof.clone()), &mut at, &mut problems),
        None => {
            return TrustState::rejected(
                Step::ProofShape,
                format!("no generated validator for `{proof_type}`"),
            )
        }
    }
    let step_of = |pointer: &str| match pointer {
        "/proof/profile" => Step::Profile,
        "/proof/alg" => Step::Algorithm,
        "/proof/pubkey" => Step::PublicKey,
        "/proof/key_id" => Step::KeyId,
        "/proof/sig" => Step::Signature,
        _ => Step::ProofShape,
    };
    let first_problem = problems
        .into_vec()
        .into_iter()
        .map(|p| (step_of(&p.pointer), p.message))
        .min_by_key(|(step, _)| order(*step));
    // The schema's verdict on the members a step reads, when the steps reach it.
    let schema = |step: Step| match &first_problem {
        Some((s, m)) if order(*s) <= order(step) => Some(TrustState::rejected(*s, m.clone())),
        _ => None,
    };
    // 1 (the profile is this one: `evaluate` sent it here), 2.
    if let Some(state) = schema(Step::Algorithm) {
        return state;
    }
    let text = |name: &str| proof.get(name).and_then(Value::as_str).unwrap_or("");
    let (key_id, pubkey, sig) = (text("key_id"), text("pubkey"), text("sig"));
    // 3.
    if let Some(state) = schema(Step::PublicKey) {
        return state;
    }
    let public: [u8; 32] = match B64.decode(pubkey).map(<[u8; 32]>::try_from) {
        Ok(Ok(k)) => k,
        Ok(Err(v)) => {
            return TrustState::rejected(
                Step::PublicKey,
                format!("`pubkey` decodes to {} bytes, not 32", v.len()),
            )
        }
        Err(e) => {
            return TrustState::rejected(
                Step::PublicKey,
                format!("`pubkey` is not unpadded base64url: {e}"),
            )
        }
    };
    // 4, 5.
    if let Some(state) = schema(Step::KeyId) {
        return state;
    }
    let digest = key_digest_hex(&public);
    if key_id.strip_prefix("sha256:") != Some(digest.as_str()) {
        return TrustState::rejected(
            Step::KeyId,
            format!("`key_id` is not `sha256:` and the SHA-256 of `pubkey` ({digest})"),
        );
    }
    // 6.
    let fingerprint = &digest[..32];
    match split_verified_id(from) {
        Some((_, fp)) if fp == fingerprint => {}
        Some((_, fp)) => {
            return TrustState::rejected(
                Step::Fingerprint,
                format!("`from` names fingerprint {fp}, the key's is {fingerprint}"),
            )
        }
        None => {
            return TrustState::rejected(
                Step::Fingerprint,
                format!("`from` `{from}` is not `nickname@{fingerprint}`"),
            )
        }
    }
    // 7.
    let signed = match signed_bytes(envelope) {
        Ok(b) => b,
        Err(e) => return TrustState::rejected(Step::Canonical, e.to_string()),
    };
    // 8. Strict verification (RFC 8032 section 5.1.7 with the checks of `verify_strict`): `sig`
    // is 64 bytes, `R` and the public key are curve points, neither of small order (order
    // dividing 8: any of their encodings, canonical or not), `S` below the group order.
    if let Some(state) = schema(Step::Signature) {
        return state;
    }
    let signature: [u8; 64] = match B64.decode(sig).map(<[u8; 64]>::try_from) {
        Ok(Ok(s)) => s,
        Ok(Err(v)) => {
            return TrustState::rejected(
                Step::Signature,
                format!("`sig` decodes to {} bytes, not 64", v.len()),
            )
        }
        Err(e) => {
            return TrustState::rejected(
                Step::Signature,
                format!("`sig` is not unpadded base64url: {e}"),
            )
        }
    };
    let key =
        match VerifyingKey::from_bytes(&public) {
            Ok(k) if k.is_weak() => {
                return TrustState::rejected(
                    Step::Signature,
                    "`pubkey` is a point of small order: strict verification refuses it",
                )
            }
            Ok(k) => k,
            Err(_) => return TrustState::rejected(
                Step::Signature,
                "`pubkey` is not the encoding of an Ed25519 curve point: no signature verifies \
                 under it",
            ),
        };
    let mut r = [0u8; 32];
    r.copy_from_slice(&signature[..32]);
    match VerifyingKey::from_bytes(&r) {
        Ok(point) if point.is_weak() => {
            return TrustState::rejected(
                Step::Signature,
                "the signature's `R` is a point of small order: strict verification refuses it",
            )
        }
        Ok(_) => {}
        Err(_) => {
            return TrustState::rejected(
                Step::Signature,
                "the signature's `R` is not the encoding of an Ed25519 curve point",
            )
        }
    }
    match key.verify_strict(&signed, &Signature::from_bytes(&signature)) {
        Ok(()) => TrustState::Verified {
            fingerprint: fingerprint.to_owned(),
        },
        Err(_) => TrustState::rejected(
            Step::Signature,
            "the signature does not verify over the canonical envelope without `proof.sig`",
        ),
    }
}

/// The bytes a signature covers: the JCS form of the envelope with only `proof.sig` removed
/// (nothing added: absent members stay absent).
pub fn signed_bytes(envelope: &Map<String, Value>) -> Result<Vec<u8>, crate::jcs::JcsError> {
    let mut copy = envelope.clone();
    if let Some(Value::Object(proof)) = copy.get_mut("proof") {
        proof.remove("sig");
    }
    crate::jcs::canonicalize(&Value::Object(copy))
}

/// The trust state of envelope bytes, read strictly within the default limits
/// ([`JsonLimits::default`](crate::json::JsonLimits)); [`evaluate_bytes_with`] takes the
/// caller's (a receiver's `Options` give them).
pub fn evaluate_bytes(bytes: &[u8]) -> TrustState {
    evaluate_bytes_with(bytes, &crate::json::JsonLimits::default())
}

/// The trust state of envelope bytes, read strictly within `limits` (unreadable JSON leaves no
/// envelope to canonicalize: `rejected` at [`Step::Canonical`]).
pub fn evaluate_bytes_with(bytes: &[u8], limits: &crate::json::JsonLimits) -> TrustState {
    match crate::json::read_envelope_json(bytes, limits) {
        Ok(map) => evaluate(&map),
        Err(e) => TrustState::rejected(Step::Canonical, e.message),
    }
}

/// Why a key or a signature could not be made.
#[derive(Debug)]
pub enum KeyError {
    /// Reading or writing the key file.
    Io(std::io::Error),
    /// The key file is not a PKCS#8 Ed25519 private key in PEM.
    Format(String),
    /// No randomness from the operating system.
    Random(String),
    /// A nickname outside `[a-z0-9_-]{1,32}`.
    Nickname(String),
    /// The envelope cannot be signed as it is.
    Envelope(String),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Io(e) => write!(f, "{e}"),
            KeyError::Format(m)
            | KeyError::Random(m)
            | KeyError::Nickname(m)
            | KeyError::Envelope(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for KeyError {}

/// An I/O error on a key file, naming the file.
fn in_file(path: &Path, e: std::io::Error) -> KeyError {
    KeyError::Io(std::io::Error::new(
        e.kind(),
        format!("{}: {e}", path.display()),
    ))
}

/// An Ed25519 signing key of this profile. Stored as a PKCS#8 PEM file (`BEGIN PRIVATE KEY`, what
/// `openssl genpkey -algorithm ed25519` writes), written with owner-only permissions.
#[derive(Clone)]
pub struct Key {
    signing: SigningKey,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl Key {
    /// A new key from the operating system's randomness.
    pub fn generate() -> Result<Key, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(Key::from_seed(&seed))
    }

    /// The key of a 32-byte seed (RFC 8032 private key).
    pub fn from_seed(seed: &[u8; 32]) -> Key {
        Key {
            signing: SigningKey::from_bytes(seed),
        }
    }

    /// Reads a PKCS#8 PEM private key.
    pub fn from_pem(pem: &str) -> Result<Key, KeyError> {
        SigningKey::from_pkcs8_pem(pem)
            .map(|signing| Key { signing })
            .map_err(|e| KeyError::Format(format!("not a PKCS#8 Ed25519 private key: {e}")))
    }

    /// The key as PKCS#8 PEM: version 1, the private key alone, as `openssl genpkey -algorithm
    /// ed25519` writes it and OpenSSL and Python's `cryptography` read it (the public key follows
    /// from it). [`Key::from_pem`] reads version 2 as well. The text is wiped from memory when
    /// dropped.
    pub fn to_pem(&self) -> Result<zeroize::Zeroizing<String>, KeyError> {
        ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.signing.to_bytes(),
            public_key: None,
        }
        .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
        .map_err(|e| KeyError::Format(e.to_string()))
    }

    /// Loads a key file.
    pub fn load(path: &Path) -> Result<Key, KeyError> {
        // The file's text holds the secret: wiped from memory when dropped.
        let text =
            zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(|e| in_file(path, e))?);
        Key::from_pem(&text).map_err(|e| KeyError::Format(format!("{}: {e}", path.display())))
    }

    /// Saves the key to a new file readable and writable by its owner only (an existing file is
    /// not overwritten).
    pub fn save(&self, path: &Path) -> Result<(), KeyError> {
        use std::io::Write;
        let pem = self.to_pem()?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|e| in_file(path, e))?;
        file.write_all(pem.as_bytes()).map_err(|e| in_file(path, e))
    }

    /// The raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.signing.verifying_key().to_bytes()
    }

    /// `proof.pubkey`: base64url of the public key.
    pub fn public_key_b64(&self) -> String {
        B64.encode(self.public_key())
    }

    /// `proof.key_id`: `sha256:` and the 64 hex of SHA-256(pubkey).
    pub fn key_id(&self) -> String {
        format!("sha256:{}", key_digest_hex(&self.public_key()))
    }

    /// The fingerprint: the first 32 hex of SHA-256(pubkey).
    pub fn fingerprint(&self) -> String {
        key_digest_hex(&self.public_key())[..32].to_owned()
    }

    /// The verified peer id `nickname@fingerprint`.
    pub fn peer_id(&self, nickname: &str) -> Result<String, KeyError> {
        let id = format!("{nickname}@{}", self.fingerprint());
        match split_verified_id(&id) {
            Some(_) => Ok(id),
            None => Err(KeyError::Nickname(format!(
                "nickname `{nickname}` does not match [a-z0-9_-]{{1,32}}"
            ))),
        }
    }

    /// Signs an envelope in place: checks that `from` is this key's verified identity, writes
    /// the proof's `profile`, `alg`, `key_id` and `pubkey`, then `sig` over the canonical form of
    /// the result without `sig`. Nothing else is touched (absent members stay absent).
    pub fn sign_envelope(&self, envelope: &mut Map<String, Value>) -> Result<(), KeyError> {
        let from = envelope.get("from").and_then(Value::as_str).unwrap_or("");
        match split_verified_id(from) {
            Some((_, fp)) if fp == self.fingerprint() => {}
            _ => {
                return Err(KeyError::Envelope(format!(
                    "`from` is `{from}`, not `<nickname>@{}` of this key",
                    self.fingerprint()
                )))
            }
        }
        let mut proof = Map::new();
        proof.insert("profile".into(), PROFILE.into());
        proof.insert("alg".into(), ALG.into());
        proof.insert("key_id".into(), self.key_id().into());
        proof.insert("pubkey".into(), self.public_key_b64().into());
        let before = envelope.insert("proof".into(), Value::Object(proof));
        let signed = match signed_bytes(envelope) {
            Ok(signed) => signed,
            Err(e) => {
                // Nothing signed: the envelope is left as it was given.
                match before {
                    Some(proof) => envelope.insert("proof".into(), proof),
                    None => envelope.remove("proof"),
                };
                return Err(KeyError::Envelope(format!("no canonical form: {e}")));
            }
        };
        let sig = B64.encode(self.signing.sign(&signed).to_bytes());
        if let Some(Value::Object(proof)) = envelope.get_mut("proof") {
            proof.insert("sig".into(), sig.into());
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(from: &str) -> Map<String, Value> {
        let Value::Object(m) = json!({
            "protocol": "agh-network/v0", "id": "m1", "workspace_id": "ws", "kind": "say",
            "channel": "c", "surface": "thread", "thread_id": "t", "from": from, "ts": 1776366000,
            "body": {"text": "hi", "n": 1.50}, "ext": {"acme.x": [1e2, "é"]}
        }) else {
            unreachable!()
        };
        m
    }

    fn key() -> Key {
        Key::from_seed(&[7u8; 32])
    }

    fn signed() -> Map<String, Value> {
        let k = key();
        let mut e = envelope(&k.peer_id("ops").unwrap());
        k.sign_envelope(&mut e).unwrap();
        e
    }

    fn step(state: TrustState) -> Step {
        match state {
            TrustState::Rejected { step, .. } => step,
            other => panic!("not rejected: {other}"),
        }
    }

    #[test]
    fn a_signed_envelope_verifies_and_every_tamper_is_caught_at_its_step() {
        let e = signed();
        assert!(evaluate(&e).is_verified(), "{}", evaluate(&e));
        // One member of the body changed.
        let mut t = e.clone();
        t["body"]["text"] = "ho".into();
        assert_eq!(step(evaluate(&t)), Step::Signature);
        // An ext member added.
        let mut t = e.clone();
        t["ext"]["acme.y"] = true.into();
        assert_eq!(step(evaluate(&t)), Step::Signature);
        // `to: null` inserted: absent members are signed by their absence.
        let mut t = e.clone();
        t.insert("to".into(), Value::Null);
        assert_eq!(step(evaluate(&t)), Step::Signature);
        // Proof stripped.
        let mut t = e.clone();
        t.remove("proof");
        assert_eq!(step(evaluate(&t)), Step::ProofStripped);
        // Another key swapped in (its own key_id too): the fingerprint no longer matches.
        let other = Key::from_seed(&[9u8; 32]);
        let mut t = e.clone();
        t["proof"]["pubkey"] = other.public_key_b64().into();
        t["proof"]["key_id"] = other.key_id().into();
        assert_eq!(step(evaluate(&t)), Step::Fingerprint);
        // key_id of another key.
        let mut t = e.clone();
        t["proof"]["key_id"] = other.key_id().into();
        assert_eq!(step(evaluate(&t)), Step::KeyId);
        // alg, profile of ours misspelled, unknown member, padded base64url.
        let mut t = e.clone();
        t["proof"]["alg"] = "EdDSA".into();
        assert_eq!(step(evaluate(&t)), Step::Algorithm);
        let mut t = e.clone();
        t["proof"]["extra"] = 1.into();
        assert_eq!(step(evaluate(&t)), Step::ProofShape);
        let mut t = e.clone();
        let padded = format!("{}=", t["proof"]["pubkey"].as_str().unwrap());
        t["proof"]["pubkey"] = padded.into();
        assert_eq!(step(evaluate(&t)), Step::PublicKey);
        let mut t = e.clone();
        let padded = format!("{}==", t["proof"]["sig"].as_str().unwrap());
        t["proof"]["sig"] = padded.into();
        assert_eq!(step(evaluate(&t)), Step::Signature);
        // A signature reused on another envelope.
        let mut t = envelope(&key().peer_id("ops").unwrap());
        t["id"] = "m2".into();
        t.insert("proof".into(), e["proof"].clone());
        assert_eq!(step(evaluate(&t)), Step::Signature);
    }

    #[test]
    fn a_non_canonical_s_is_refused() {
        // S + L (the group order) verifies with a lax verifier but is not canonical.
        let e = signed();
        let sig = B64.decode(e["proof"]["sig"].as_str().unwrap()).unwrap();
        let l: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
        ];
        let mut s = [0u8; 32];
        let mut carry = 0u16;
        for i in 0..32 {
            let v = u16::from(sig[32 + i]) + u16::from(l[i]) + carry;
            s[i] = (v & 0xff) as u8;
            carry = v >> 8;
        }
        let mut bad = sig.clone();
        bad[32..].copy_from_slice(&s);
        let mut t = e.clone();
        t["proof"]["sig"] = B64.encode(&bad).into();
        assert_eq!(step(evaluate(&t)), Step::Signature);
    }

    /// `e` with a proof naming the raw `public` key (its `key_id`, and `from` its fingerprint)
    /// and the raw signature `sig`: steps 1-7 hold, step 8 decides.
    fn with_raw_proof(public: &[u8; 32], sig: &[u8; 64]) -> Map<String, Value> {
        let digest = key_digest_hex(public);
        let mut e = envelope(&format!("ops@{}", &digest[..32]));
        e.insert(
            "proof".into(),
            json!({"profile": PROFILE, "alg": ALG, "key_id": format!("sha256:{digest}"),
                   "pubkey": B64.encode(public), "sig": B64.encode(sig)}),
        );
        e
    }

    /// p = 2^255 - 19 plus `k` (`k` small), little-endian: the non-canonical encodings of
    /// y = k (with the sign bit of x clear).
    fn p_plus(k: u8) -> [u8; 32] {
        let mut b = [0xffu8; 32];
        b[31] = 0x7f;
        b[0] = 0xed + k;
        b
    }

    #[test]
    fn small_order_keys_and_r_are_refused_at_step_8() {
        // Encodings of points of order 1, 2 and 4 (y = 1, y = p - 1, y = 0), both signs of x,
        // and the non-canonical y = p, y = p + 1; the order-8 ones are computed by the Python
        // check (tests/trust_python.rs compares both sides on all of them).
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let mut minus_one = p_plus(0);
        minus_one[0] = 0xec;
        let zero = [0u8; 32];
        let mut small = vec![identity, minus_one, zero, p_plus(0), p_plus(1)];
        for b in small.clone() {
            let mut signed_x = b;
            signed_x[31] |= 0x80;
            small.push(signed_x);
        }
        for a in &small {
            let point = VerifyingKey::from_bytes(a);
            if let Ok(k) = point {
                assert!(k.is_weak(), "{a:02x?} is of small order");
            }
            // pubkey A small (R = A, S = 0: the equation [S]B = R + [k]A holds for the identity).
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(a);
            let state = evaluate(&with_raw_proof(a, &sig));
            assert_eq!(step(state.clone()), Step::Signature, "{a:02x?}: {state}");
        }
        // The identity as key and R with S = 0 verifies under a lax check for every message: the
        // reason strict verification exists.
        let TrustState::Rejected { message, .. } = evaluate(&with_raw_proof(&identity, &{
            let mut s = [0u8; 64];
            s[0] = 1;
            s
        })) else {
            panic!("accepted")
        };
        assert!(message.contains("small order"), "{message}");
        // A good key with a small-order R.
        let k = key();
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&identity);
        let TrustState::Rejected { step: s, message } =
            evaluate(&with_raw_proof(&k.public_key(), &sig))
        else {
            panic!("accepted")
        };
        assert_eq!(s, Step::Signature);
        assert!(message.contains("`R`"), "{message}");
    }

    #[test]
    fn a_pubkey_that_is_no_curve_point_fails_step_8() {
        // The first y (counting up from 2) with no x on the curve: found, not assumed.
        let not_a_point = (2u8..=255)
            .map(|y| {
                let mut b = [0u8; 32];
                b[0] = y;
                b
            })
            .find(|b| VerifyingKey::from_bytes(b).is_err())
            .unwrap();
        let e = with_raw_proof(&not_a_point, &[0x11; 64]);
        let TrustState::Rejected { step: s, message } = evaluate(&e) else {
            panic!("accepted")
        };
        assert_eq!(s, Step::Signature);
        assert!(message.contains("curve point"), "{message}");
    }

    #[test]
    fn with_two_faults_the_earlier_step_is_reported() {
        let e = signed();
        let other = Key::from_seed(&[9u8; 32]);
        let pad = |v: &Value, p: &str| format!("{}{p}", v.as_str().unwrap());
        // A padded `sig` (step 8) and a wrong key_id (5).
        let mut t = e.clone();
        t["proof"]["sig"] = pad(&t["proof"]["sig"], "==").into();
        t["proof"]["key_id"] = other.key_id().into();
        assert_eq!(step(evaluate(&t)), Step::KeyId);
        // No `sig` (8) and another key's fingerprint in `from` (6).
        let mut t = e.clone();
        t["proof"].as_object_mut().unwrap().remove("sig");
        t["from"] = other.peer_id("ops").unwrap().into();
        assert_eq!(step(evaluate(&t)), Step::Fingerprint);
        // A short `sig` (8) and a number without a canonical form (7).
        let mut t = e.clone();
        t["proof"]["sig"] = "AAAA".into();
        t["body"]["n"] = serde_json::from_str::<Value>("1e400").unwrap();
        assert_eq!(step(evaluate(&t)), Step::Canonical);
        // A pubkey that is no curve point (8) and a wrong key_id (5).
        let mut t = with_raw_proof(&[0u8; 32], &[0u8; 64]);
        t["proof"]["key_id"] = other.key_id().into();
        assert_eq!(step(evaluate(&t)), Step::KeyId);
        // A padded pubkey (3) and `alg` misspelled (2).
        let mut t = e.clone();
        t["proof"]["pubkey"] = pad(&t["proof"]["pubkey"], "=").into();
        t["proof"]["alg"] = "EdDSA".into();
        assert_eq!(step(evaluate(&t)), Step::Algorithm);
        // An unknown member (the shape, with step 1) and `alg` misspelled (2).
        let mut t = e.clone();
        t["proof"]["nonce"] = "1".into();
        t["proof"]["alg"] = "EdDSA".into();
        assert_eq!(step(evaluate(&t)), Step::ProofShape);
        // An empty profile (1) and everything else wrong too.
        let mut t = e.clone();
        t["proof"] = json!({"profile": "", "alg": 5});
        assert_eq!(step(evaluate(&t)), Step::Profile);
    }

    #[test]
    fn the_canonical_json_step_fails_on_a_number_jcs_cannot_write() {
        // Steps 1-6 hold (the proof is untouched); 1e400 has no ECMAScript form.
        let mut t = signed();
        t["ext"]["acme.big"] = serde_json::from_str::<Value>("1e400").unwrap();
        assert_eq!(step(evaluate(&t)), Step::Canonical);
    }

    #[test]
    fn an_integer_beyond_the_exact_doubles_is_neither_signed_nor_verified() {
        // Signing refuses it, naming the member, and leaves the envelope as it was.
        let k = key();
        let mut e = envelope(&k.peer_id("ops").unwrap());
        e["ext"]["acme.amount"] = serde_json::from_str::<Value>("9007199254740993").unwrap();
        let before = e.clone();
        let err = k.sign_envelope(&mut e).unwrap_err().to_string();
        assert!(
            err.contains("/ext/acme.amount") && err.contains("2^53"),
            "{err}"
        );
        assert_eq!(e, before);
        // A signer that rounds it to the nearest double (9007199254740992, as a plain RFC 8785
        // writer would) signs a canonical form that `...993` and `...992` share: a receiver
        // that keeps the integer must not call either verified.
        let mut rounded = envelope(&k.peer_id("ops").unwrap());
        rounded["ext"]["acme.amount"] = json!(9_007_199_254_740_991_u64);
        k.sign_envelope(&mut rounded).unwrap();
        let text = serde_json::to_string(&rounded).unwrap();
        let signed_over_rounded = {
            let mut m = rounded.clone();
            if let Some(Value::Object(p)) = m.get_mut("proof") {
                p.remove("sig");
            }
            let canonical = String::from_utf8(signed_bytes(&m).unwrap())
                .unwrap()
                .replace("9007199254740991", "9007199254740992");
            B64.encode(k.signing.sign(canonical.as_bytes()).to_bytes())
        };
        let sig = rounded["proof"]["sig"].as_str().unwrap().to_owned();
        for big in ["9007199254740992", "9007199254740993"] {
            let forged = text
                .replace("9007199254740991", big)
                .replace(&sig, &signed_over_rounded);
            let state = evaluate_bytes(forged.as_bytes());
            assert_eq!(step(state), Step::Canonical, "{big}");
        }
        // The largest exact integer signs and verifies.
        assert!(evaluate_bytes(text.as_bytes()).is_verified());
    }

    #[test]
    fn profile_members_one_rule() {
        // Absent or null: no profile named (unverified with a plain `from`); a non-empty string:
        // a profile (another: unverified); anything else: a malformed proof, step 1.
        let plain = |proof: Value| {
            let mut e = envelope("ops.a");
            e.insert("proof".into(), proof);
            evaluate(&e)
        };
        assert_eq!(plain(json!({"alg": "none"})).as_str(), "unverified");
        assert_eq!(plain(json!({"profile": null})).as_str(), "unverified");
        assert_eq!(plain(json!({"profile": "x/v9"})).as_str(), "unverified");
        for bad in [json!(""), json!(5), json!({}), json!(["p"]), json!(false)] {
            assert_eq!(step(plain(json!({ "profile": bad }))), Step::Profile);
        }
    }

    #[test]
    fn states_without_a_proof_of_this_profile() {
        assert_eq!(evaluate(&envelope("ops.a")).as_str(), "unverified");
        let mut e = envelope("ops.a");
        e.insert(
            "proof".into(),
            json!({"profile": "example.other/v1", "x": 1}),
        );
        assert_eq!(evaluate(&e).as_str(), "unverified");
        // A proof naming no profile is no proof of any: unverified, as v0 reads it (the seed
        // pages win over the profile's "malformed proof"; fixture core.envelope/accept_proof_object).
        e.insert("proof".into(), json!({"alg": "none"}));
        assert_eq!(evaluate(&e).as_str(), "unverified");
        e.insert("proof".into(), json!({"profile": PROFILE}));
        assert_eq!(step(evaluate(&e)), Step::Algorithm);
        e.insert("proof".into(), json!("sig"));
        assert_eq!(step(evaluate(&e)), Step::ProofShape);
        let mut v = envelope(&key().peer_id("ops").unwrap());
        v.insert("proof".into(), json!({"profile": "example.other/v1"}));
        assert_eq!(step(evaluate(&v)), Step::ProofStripped);
        assert_eq!(
            step(TrustPolicy::VerifiedOnly.apply(evaluate(&envelope("ops.a")))),
            Step::Policy
        );
    }

    #[test]
    fn the_schemas_name_this_recipe_for_the_profile() {
        let entry = crate::generated::TRUST_PROFILES[0];
        assert_eq!(
            (entry.member, entry.profile, entry.recipe, entry.proof_type),
            (
                "proof",
                "agh-network.trust.ed25519-jcs/v1",
                RECIPE,
                "TrustProof"
            )
        );
    }

    #[test]
    fn keys_round_trip_through_pem_and_name_their_peer() {
        let k = key();
        let pem = k.to_pem().unwrap();
        assert!(
            pem.starts_with("-----BEGIN PRIVATE KEY-----"),
            "{}",
            pem.as_str()
        );
        assert_eq!(Key::from_pem(&pem).unwrap().public_key(), k.public_key());
        assert!(k.peer_id("Bad Nick").is_err());
        assert_eq!(k.peer_id("ops").unwrap().len(), "ops@".len() + 32);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.pem");
        k.save(&path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(
            k.save(&path).is_err(),
            "an existing key file is not overwritten"
        );
        assert_eq!(Key::load(&path).unwrap().fingerprint(), k.fingerprint());
        assert!(Key::generate().unwrap().fingerprint() != k.fingerprint());
        // Errors name the file.
        let missing = dir.path().join("missing.pem");
        let e = Key::load(&missing).unwrap_err().to_string();
        assert!(e.contains("missing.pem"), "{e}");
        let e = k.save(&path).unwrap_err().to_string();
        assert!(e.contains("ops.pem"), "{e}");
    }

    #[test]
    fn the_pem_is_pkcs8_version_1_and_version_2_is_read_too() {
        use ed25519_dalek::pkcs8::spki::der::Decode;
        let k = key();
        let pem = k.to_pem().unwrap();
        let (_, der) = ed25519_dalek::pkcs8::spki::der::pem::decode_vec(pem.as_bytes()).unwrap();
        let info = ed25519_dalek::pkcs8::PrivateKeyInfoRef::from_der(&der).unwrap();
        assert!(info.public_key.is_none(), "version 1: no public key member");
        // RFC 8410's example layout: 48 bytes, version 0.
        assert_eq!(der.len(), 48);
        assert_eq!(&der[..7], &[0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05]);
        let v2 = k
            .signing
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap();
        assert_eq!(Key::from_pem(&v2).unwrap().public_key(), k.public_key());
    }
}
