//! Which `integer` schemas hold integers of any size ([`big_integer`]).
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

fn cmp(a: &str, b: &str) -> Ordering {
    compare(a, b).unwrap_or(Ordering::Equal)
}
