//! [`BigInt`]: the typed form of a schema `integer` that is not held to 64 bits.
//!
//! JSON Schema's `integer` has no size. Where a schema set does not declare the 64-bit stance
//! (`x-agh-envelope.integer_bits: 64`), or where a schema's own bounds reach beyond 64 bits, the
//! generated type of an `integer` is this one instead of `i64`/`u64`: the number is kept as the
//! JSON text it was written as (`12345678910111213141516171819202122232425262728293031`, `1e308`,
//! `1.0`; serde_json may respell an exponent's sign), compared by exact decimal value
//! ([`crate::json::decimal`]), and written back as it is held. Its text is always a JSON number
//! of integral value.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::json::decimal;

/// An integer of any size, kept as written (see the module documentation).
#[derive(Clone, Debug)]
pub struct BigInt(String);

/// Text that is not a JSON number of integral value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAnInteger(String);

impl fmt::Display for NotAnInteger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a JSON number of integral value", self.0)
    }
}

impl std::error::Error for NotAnInteger {}

impl BigInt {
    /// The JSON number text, as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value when it fits 64 bits (`i64::MIN` to `u64::MAX`), however written.
    pub fn to_i128(&self) -> Option<i128> {
        decimal::integral_value(&self.0)
    }

    /// The value as a `u64`, when it is one.
    pub fn to_u64(&self) -> Option<u64> {
        self.to_i128().and_then(|v| u64::try_from(v).ok())
    }

    /// The value as an `i64`, when it is one.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }
}

impl FromStr for BigInt {
    type Err = NotAnInteger;

    /// Reads JSON number text of integral value, of any size and however written.
    fn from_str(text: &str) -> Result<Self, NotAnInteger> {
        if decimal::is_integral(text) {
            Ok(BigInt(text.to_owned()))
        } else {
            Err(NotAnInteger(text.to_owned()))
        }
    }
}

impl From<u64> for BigInt {
    fn from(v: u64) -> Self {
        BigInt(v.to_string())
    }
}

impl From<i64> for BigInt {
    fn from(v: i64) -> Self {
        BigInt(v.to_string())
    }
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq for BigInt {
    /// Equal by value: `1.0` equals `1`, `1e3` equals `1000`.
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for BigInt {}

impl PartialOrd for BigInt {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigInt {
    /// By exact decimal value (both texts are JSON numbers, so they always compare).
    fn cmp(&self, other: &Self) -> Ordering {
        decimal::compare(&self.0, &other.0).unwrap_or(Ordering::Equal)
    }
}

impl serde::Serialize for BigInt {
    /// The number as written (with `serde_json`: byte for byte).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = serde_json::Number::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        n.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for BigInt {
    /// Any JSON number of integral value; a fraction (`1.5`) or another type is an error.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        n.as_str().parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::BigInt;

    const BIG: &str = "12345678910111213141516171819202122232425262728293031";

    #[test]
    fn holds_integers_of_any_size_as_written() {
        for text in [
            BIG,
            "-12345678910111213141516171819202122232425262728293031",
            "1e308",
            "1.0",
            "-0",
            "0",
        ] {
            let want: BigInt = text.parse().expect(text);
            assert_eq!(want.as_str(), text);
            let b: BigInt = serde_json::from_str(text).expect(text);
            assert_eq!(b, want, "{text}");
            let v: serde_json::Value = serde_json::from_str(text).expect(text);
            assert_eq!(serde_json::from_value::<BigInt>(v).expect(text), want);
            let written = serde_json::to_string(&want).expect("writes");
            assert_eq!(written.parse::<BigInt>().expect(&written), want);
        }
        // Digits are kept as they are (serde_json may only respell an exponent's sign).
        let b: BigInt = serde_json::from_str(BIG).expect("reads");
        assert_eq!(b.as_str(), BIG);
        assert_eq!(serde_json::to_string(&b).expect("writes"), BIG);
    }

    #[test]
    fn refuses_what_is_no_integer() {
        for text in ["1.5", "1e-3", "\"1\"", "null", "[1]"] {
            assert!(serde_json::from_str::<BigInt>(text).is_err(), "{text}");
        }
        assert!("1.5".parse::<BigInt>().is_err());
        assert!("x".parse::<BigInt>().is_err());
    }

    #[test]
    fn compares_and_converts_by_value() {
        let p = |t: &str| t.parse::<BigInt>().expect(t);
        assert_eq!(p("1.0"), p("1"));
        assert_eq!(p("1e3"), BigInt::from(1000u64));
        assert!(p(BIG) > p("18446744073709551615"));
        assert!(p("-1e30") < BigInt::from(i64::MIN));
        assert_eq!(p("1e3").to_u64(), Some(1000));
        assert_eq!(p("-5").to_i64(), Some(-5));
        assert_eq!(p("-5").to_u64(), None);
        assert_eq!(p(BIG).to_i128(), None);
    }
}
