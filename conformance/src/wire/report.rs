//! The wire kit's verdicts and their three forms: text lines, JSON, JUnit XML.

use serde_json::{json, Value};

use super::scenario::{Level, Strength};

/// The outcome of one requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Checked and met.
    Pass,
    /// Checked and not met: what was sent, expected and what arrived.
    Fail(String),
    /// Not checked, and why (a level above the one asked for).
    Skip(String),
}

/// One requirement's verdict.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The requirement id.
    pub id: String,
    /// Its group (scenario file).
    pub group: String,
    /// MUST / SHOULD / MAY.
    pub strength: Strength,
    /// The lowest level that requires it.
    pub level: Level,
    /// The page or NOTES section.
    pub source: String,
    /// What is required.
    pub title: String,
    /// The outcome.
    pub status: Status,
}

/// The verdicts of one run of the kit against one target.
#[derive(Clone, Debug)]
pub struct WireReport {
    /// The target peer id.
    pub target: String,
    /// The level asked for.
    pub level: Level,
    /// One per requirement run or skipped, in scenario order.
    pub verdicts: Vec<Verdict>,
    /// How long the run took, milliseconds.
    pub elapsed_ms: u128,
}

impl WireReport {
    fn count(&self, f: impl Fn(&Status) -> bool) -> usize {
        self.verdicts.iter().filter(|v| f(&v.status)).count()
    }

    /// Requirements met.
    pub fn passed(&self) -> usize {
        self.count(|s| *s == Status::Pass)
    }

    /// Requirements not met (any strength).
    pub fn failed(&self) -> usize {
        self.count(|s| matches!(s, Status::Fail(_)))
    }

    /// Requirements not checked.
    pub fn skipped(&self) -> usize {
        self.count(|s| matches!(s, Status::Skip(_)))
    }

    /// Whether every MUST of the level passed (SHOULD and MAY failures are reported only).
    pub fn level_met(&self) -> bool {
        !self
            .verdicts
            .iter()
            .any(|v| v.strength == Strength::Must && matches!(v.status, Status::Fail(_)))
    }

    /// The ids of the requirements that failed.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.verdicts
            .iter()
            .filter(|v| matches!(v.status, Status::Fail(_)))
            .map(|v| v.id.as_str())
            .collect()
    }

    /// The closing line: `N passed, M failed` (`, K skipped`).
    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed(), self.failed());
        if self.skipped() > 0 {
            s.push_str(&format!(", {} skipped", self.skipped()));
        }
        s
    }

    /// One line per requirement (failure details indented below it), then the closing line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for v in &self.verdicts {
            let (word, detail) = match &v.status {
                Status::Pass => ("PASS", None),
                Status::Fail(d) => ("FAIL", Some(d)),
                Status::Skip(d) => ("SKIP", Some(d)),
            };
            out.push_str(&format!(
                "{word} {:<6} {} [{}] {}\n",
                v.strength.as_str(),
                v.id,
                v.source,
                v.title
            ));
            if let Some(d) = detail {
                for line in d.lines() {
                    out.push_str(&format!("     {line}\n"));
                }
            }
        }
        out.push_str(&format!(
            "level {} for {}: {}\n",
            self.level.as_str(),
            self.target,
            if self.level_met() {
                "every MUST passed"
            } else {
                "NOT met (a MUST failed)"
            }
        ));
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The report as one JSON document.
    pub fn json(&self) -> Value {
        let verdicts: Vec<Value> = self
            .verdicts
            .iter()
            .map(|v| {
                let (status, detail) = match &v.status {
                    Status::Pass => ("pass", None),
                    Status::Fail(d) => ("fail", Some(d)),
                    Status::Skip(d) => ("skip", Some(d)),
                };
                json!({
                    "id": v.id,
                    "group": v.group,
                    "strength": v.strength.as_str(),
                    "level": v.level.as_str(),
                    "source": v.source,
                    "title": v.title,
                    "status": status,
                    "detail": detail,
                })
            })
            .collect();
        json!({
            "kit": "agh conformance wire",
            "protocol": crate::implementation::PROTOCOL,
            "target": self.target,
            "level": self.level.as_str(),
            "level_met": self.level_met(),
            "passed": self.passed(),
            "failed": self.failed(),
            "skipped": self.skipped(),
            "elapsed_ms": self.elapsed_ms,
            "verdicts": verdicts,
        })
    }

    /// The report as JUnit XML: one test case per requirement (class `wire.<group>`); a failed
    /// SHOULD or MAY is a failure of type `SHOULD` / `MAY` (the level is met all the same).
    pub fn junit(&self) -> String {
        let mut cases = String::new();
        for v in &self.verdicts {
            cases.push_str(&format!(
                "    <testcase classname=\"wire.{}\" name=\"{} ({})\" time=\"0\">\n",
                xml(&v.group),
                xml(&v.id),
                v.strength.as_str()
            ));
            match &v.status {
                Status::Pass => {}
                Status::Fail(d) => cases.push_str(&format!(
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                    v.strength.as_str(),
                    xml(&format!("{} [{}]", v.title, v.source)),
                    xml(d)
                )),
                Status::Skip(d) => {
                    cases.push_str(&format!("      <skipped message=\"{}\"/>\n", xml(d)))
                }
            }
            cases.push_str("    </testcase>\n");
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite \
             name=\"agh-conformance-wire {} {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" \
             time=\"{:.3}\">\n{cases}  </testsuite>\n</testsuites>\n",
            xml(self.level.as_str()),
            xml(&self.target),
            self.verdicts.len(),
            self.failed(),
            self.skipped(),
            self.elapsed_ms as f64 / 1000.0
        )
    }
}

/// Text escaped for XML attribute values and content (control characters dropped).
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn verdict(id: &str, strength: Strength, status: Status) -> Verdict {
        Verdict {
            id: id.into(),
            group: "g".into(),
            strength,
            level: Level::NatsPeer,
            source: "NOTES 9".into(),
            title: "t <&>".into(),
            status,
        }
    }

    #[test]
    fn a_failed_should_does_not_fail_the_level_a_failed_must_does() {
        let mut r = WireReport {
            target: "p".into(),
            level: Level::NatsPeer,
            verdicts: vec![
                verdict("a", Strength::Must, Status::Pass),
                verdict("b", Strength::Should, Status::Fail("x".into())),
                verdict("c", Strength::Must, Status::Skip("y".into())),
            ],
            elapsed_ms: 5,
        };
        assert!(r.level_met());
        assert_eq!(r.summary(), "1 passed, 1 failed, 1 skipped");
        assert!(r.text().ends_with("1 passed, 1 failed, 1 skipped\n"));
        r.verdicts[0].status = Status::Fail("no".into());
        assert!(!r.level_met());
        assert_eq!(r.failed_ids(), ["a", "b"]);
        let x = r.junit();
        assert!(x.contains("failures=\"2\" skipped=\"1\""));
        assert!(x.contains("t &lt;&amp;&gt;"));
        assert_eq!(r.json()["verdicts"][1]["status"], "fail");
        assert_eq!(r.json()["level_met"], false);
    }
}
