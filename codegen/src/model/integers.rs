//! Which `integer` schemas hold integers of any size ([`big_integer`]), and which `number`
//! schemas hold numbers beyond the range of `f64` ([`big_number`]).
//!
//! JSON Schema's `integer` has no size; the generated Rust integers (`i64`, `u64`) have 64 bits.
//! A schema set may declare the 64-bit stance (`x-agh-envelope.integer_bits: 64`, AGH Network v0
//! and ACP do): its integers fit 64 bits, as today's typed members. Without it, and for a schema
//! whose own bounds reach beyond 64 bits in either set, an integer is of any size: the validators
//! and scanners accept it, and its type is `agh_runtime::json::BigInt`. A schema of a set without
//! the stance whose bounds already keep it within `i64` stays `i64` (nothing is lost).

use std::cmp::Ordering;

use agh_runtime::json::decimal::compare;

use super::{Constraints, EnvelopeLimits};

/// The bounds of an `integer` schema as written (`minimum`, `exclusiveMinimum`, `maximum`,
/// `exclusiveMaximum`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bounds<'a> {
    pub minimum: Option<&'a str>,
    pub exclusive_minimum: Option<&'a str>,
    pub maximum: Option<&'a str>,
    pub exclusive_maximum: Option<&'a str>,
}

impl<'a> Bounds<'a> {
    /// The bounds of a shape's constraints.
    pub fn of(c: &'a Constraints) -> Self {
        Bounds {
            minimum: c.minimum.as_deref(),
            exclusive_minimum: c.exclusive_minimum.as_deref(),
            maximum: c.maximum.as_deref(),
            exclusive_maximum: c.exclusive_maximum.as_deref(),
        }
    }
}

const I64_MIN: &str = "-9223372036854775808";
const I64_MIN_EXCLUSIVE: &str = "-9223372036854775809";
const I64_MAX: &str = "9223372036854775807";
const I64_MAX_EXCLUSIVE: &str = "9223372036854775808";
const U64_MAX: &str = "18446744073709551615";
const U64_MAX_EXCLUSIVE: &str = "18446744073709551616";

/// Whether an `integer` schema with these bounds holds integers of any size (typed
/// `agh_runtime::json::BigInt`, checked by the `big` tests) rather than 64-bit ones.
pub fn big_integer(limits: &EnvelopeLimits, b: Bounds<'_>) -> bool {
    let at_least = |x: Option<&str>, bound: &str| x.is_some_and(|x| cmp(x, bound).is_ge());
    let at_most = |x: Option<&str>, bound: &str| x.is_some_and(|x| cmp(x, bound).is_le());
    let below = |x: Option<&str>, bound: &str| x.is_some_and(|x| cmp(x, bound).is_lt());
    let above = |x: Option<&str>, bound: &str| x.is_some_and(|x| cmp(x, bound).is_gt());
    match limits.integer_bits {
        // The stance: 64 bits, unless a bound written in the schema lies beyond them.
        Some(_) => {
            below(b.minimum, I64_MIN)
                || below(b.exclusive_minimum, I64_MIN_EXCLUSIVE)
                || above(b.maximum, U64_MAX)
                || above(b.exclusive_maximum, U64_MAX_EXCLUSIVE)
        }
        // JSON Schema's integers: of any size, unless the bounds keep them within `i64`.
        None => {
            let low =
                at_least(b.minimum, I64_MIN) || at_least(b.exclusive_minimum, I64_MIN_EXCLUSIVE);
            let high =
                at_most(b.maximum, I64_MAX) || at_most(b.exclusive_maximum, I64_MAX_EXCLUSIVE);
            !(low && high)
        }
    }
}

/// The largest finite `f64`, as JSON text.
const F64_MAX: &str = "1.7976931348623157e308";
const F64_MIN: &str = "-1.7976931348623157e308";

/// Whether a `number` schema with these bounds holds numbers of any size (JSON Schema's numbers;
/// typed `serde_json::Number`, kept as written) rather than `f64`: unless its bounds keep it
/// within the range of `f64` (then nothing is lost: the type is `f64`, the validators still
/// compare the number as written). No annotation changes this: no profile types an unbounded
/// `number`.
pub fn big_number(b: Bounds<'_>) -> bool {
    let within = |x: Option<&str>, lo: &str, hi: &str| {
        x.is_some_and(|x| cmp(x, lo).is_ge() && cmp(x, hi).is_le())
    };
    let low = within(b.minimum, F64_MIN, F64_MAX) || within(b.exclusive_minimum, F64_MIN, F64_MAX);
    let high = within(b.maximum, F64_MIN, F64_MAX) || within(b.exclusive_maximum, F64_MIN, F64_MAX);
    !(low && high)
}

fn cmp(a: &str, b: &str) -> Ordering {
    compare(a, b).unwrap_or(Ordering::Equal)
}
