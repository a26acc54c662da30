//! `cargo xtask schema-suite PATH...`: runs test files in the JSON-Schema-Test-Suite format
//! (`[{"description", "schema", "tests": [{"description", "data", "valid"}]}]`) through the code
//! codegen generates for each group's schema alone ([`agh_codegen::standalone`]).
//!
//! Every schema of every file goes into ONE temporary crate under the target directory
//! ([`build::Crate`]: a module per schema, depending on `agh-runtime` by path), compiled once;
//! its binary answers, for each test's data, the validator's verdict (exact path: the strict
//! reader, then the generated `check`) and the scanner's (fast path: the generated `scan` over
//! the data's JSON text). A test passes when both give the suite's verdict. A schema codegen
//! refuses is reported with the keyword and pointer its error names; its tests count as refused.
//!
//! The data's JSON text is taken from the file as written (a `RawValue`), so numbers keep every
//! digit (`18446744073709551616`, `1.0`) and reach both paths unchanged. Data the strict reader
//! does not accept as an instance (deeper than its limit, say) fails the test with the reader's
//! reason: it is neither valid nor invalid under the schema, and the suite says one or the other.

pub mod build;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

pub use build::{Crate, Runner, Verdict};

/// One group of a suite file: a schema and its tests.
#[derive(Clone, Debug)]
pub struct Group {
    /// The group's `description`.
    pub description: String,
    /// The schema (numbers kept as written).
    pub schema: Value,
    /// Its tests.
    pub tests: Vec<Case>,
}

/// One test: an instance and the suite's verdict.
#[derive(Clone, Debug)]
pub struct Case {
    /// The test's `description`.
    pub description: String,
    /// The instance's JSON text as written in the file.
    pub data: String,
    /// Whether the instance is valid under the group's schema.
    pub valid: bool,
}

/// One suite file: its name as given and its groups.
#[derive(Clone, Debug)]
pub struct SuiteFile {
    /// The path as shown in the report (relative to the directory named on the command line).
    pub name: String,
    /// Its groups, in file order.
    pub groups: Vec<Group>,
}

#[derive(Deserialize)]
struct RawGroup {
    description: String,
    schema: Value,
    tests: Vec<RawCase>,
}

#[derive(Deserialize)]
struct RawCase {
    description: String,
    data: Box<RawValue>,
    valid: bool,
}

/// Parses the text of a suite file.
pub fn parse_suite(name: &str, text: &str) -> Result<SuiteFile, String> {
    let raw: Vec<RawGroup> =
        serde_json::from_str(text).map_err(|e| format!("{name}: not a suite file: {e}"))?;
    let groups = raw
        .into_iter()
        .map(|g| Group {
            description: g.description,
            schema: g.schema,
            tests: g
                .tests
                .into_iter()
                .map(|c| Case {
                    description: c.description,
                    data: c.data.get().to_owned(),
                    valid: c.valid,
                })
                .collect(),
        })
        .collect();
    Ok(SuiteFile {
        name: name.to_owned(),
        groups,
    })
}

/// Reads every suite file named by `paths`: a file, or a directory whose `*.json` files (not its
/// subdirectories') are read in name order. Each is named by its path without the directories
/// all of them share (`optional/bignum.json` beside `maxLength.json`).
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<SuiteFile>, String> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .collect();
            files.sort();
            found.extend(files);
        } else {
            found.push(path.clone());
        }
    }
    let shared = found
        .iter()
        .filter_map(|p| p.parent())
        .reduce(|a, b| {
            let mut common = a;
            while !b.starts_with(common) {
                common = common.parent().unwrap_or(Path::new(""));
            }
            common
        })
        .unwrap_or(Path::new(""))
        .to_path_buf();
    found
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path.strip_prefix(&shared).unwrap_or(path);
            parse_suite(&name.display().to_string(), &text)
        })
        .collect()
}

/// What codegen said of a schema it does not carry: the keyword and the pointer its error names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The keyword (`dependentSchemas`), as far as the error names one.
    pub keyword: String,
    /// The JSON Pointer in the schema.
    pub pointer: String,
    /// Codegen's whole message.
    pub message: String,
}

impl Refusal {
    fn of(e: &agh_codegen::Error) -> Refusal {
        let last = e.pointer.rsplit('/').next().unwrap_or_default();
        let named = e.message.split('`').nth(1).filter(|k| !k.is_empty());
        let keyword = if is_keyword(last) {
            last.to_owned()
        } else if let Some(k) = named {
            k.to_owned()
        } else if !last.is_empty() {
            last.to_owned()
        } else {
            "schema".to_owned()
        };
        Refusal {
            keyword,
            pointer: e.pointer.clone(),
            message: e.message.clone(),
        }
    }
}

fn is_keyword(token: &str) -> bool {
    token.starts_with('$')
        || [
            "type",
            "enum",
            "const",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
            "required",
            "dependentRequired",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "prefixItems",
            "items",
            "contains",
            "properties",
            "patternProperties",
            "additionalProperties",
            "propertyNames",
            "unevaluatedItems",
            "unevaluatedProperties",
            "dependencies",
            "format",
        ]
        .contains(&token)
}

/// The outcome of one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Both paths gave the suite's verdict.
    Passed,
    /// At least one did not: what each said.
    Failed(String),
    /// Codegen refused the group's schema.
    Refused,
}

/// The outcomes of one file's groups.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// The file's name.
    pub name: String,
    /// Its groups, in file order.
    pub groups: Vec<GroupReport>,
}

/// The outcomes of one group.
#[derive(Clone, Debug)]
pub struct GroupReport {
    /// The group's description.
    pub description: String,
    /// Codegen's refusal of its schema, if it refused it.
    pub refusal: Option<Refusal>,
    /// Each test's description and outcome.
    pub tests: Vec<(String, Outcome)>,
}

/// The report of a run: one [`FileReport`] per file.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The files, in the order given.
    pub files: Vec<FileReport>,
}

impl Report {
    /// `(passed, failed, refused)` tests.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for group in self.files.iter().flat_map(|f| &f.groups) {
            for (_, o) in &group.tests {
                match o {
                    Outcome::Passed => n.0 += 1,
                    Outcome::Failed(_) => n.1 += 1,
                    Outcome::Refused => n.2 += 1,
                }
            }
        }
        n
    }
}

impl Report {
    /// Every refused group: `(file, group, refusal)`.
    pub fn refusals(&self) -> impl Iterator<Item = (&str, &str, &Refusal)> {
        self.files.iter().flat_map(|f| {
            f.groups.iter().filter_map(move |g| {
                let r = g.refusal.as_ref()?;
                Some((f.name.as_str(), g.description.as_str(), r))
            })
        })
    }
}

impl fmt::Display for Report {
    /// One line per file (`<file>: <passed>/<total>`), then each failing test (`  <group>:
    /// <test>: <what each path said>`) and each refused group (`<file>: refused (<keyword> at
    /// <pointer>): <group>`); then `N passed, M failed, K refused` (tests).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for file in &self.files {
            let tests = file.groups.iter().flat_map(|g| &g.tests);
            let total = tests.clone().count();
            let passed = tests.filter(|(_, o)| *o == Outcome::Passed).count();
            writeln!(f, "{}: {passed}/{total}", file.name)?;
            for GroupReport {
                description: group,
                refusal,
                tests,
            } in &file.groups
            {
                if let Some(r) = refusal {
                    let at = if r.pointer.is_empty() {
                        "/"
                    } else {
                        &r.pointer
                    };
                    writeln!(f, "{}: refused ({} at {at}): {group}", file.name, r.keyword)?;
                    continue;
                }
                for (test, outcome) in tests {
                    if let Outcome::Failed(why) = outcome {
                        writeln!(f, "  {group}: {test}: {why}")?;
                    }
                }
            }
        }
        let (passed, failed, refused) = self.counts();
        write!(f, "{passed} passed, {failed} failed, {refused} refused")
    }
}

/// Where the temporary crate is written and built, and which `agh-runtime` it depends on.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The workspace root (its `runtime/` is the dependency, its `Cargo.lock` pins the rest).
    pub root: PathBuf,
    /// The target directory to build in (the workspace's: dependencies already built there are
    /// reused).
    pub target_dir: PathBuf,
    /// The crate's name, and its directory under `<target_dir>/schema-suite/`.
    pub name: String,
}

/// Generates and compiles the crate for `files` (a module per group whose schema codegen
/// carries), runs every test through it and reports.
pub fn run(files: &[SuiteFile], setup: &Setup) -> Result<Report, String> {
    let schemas: Vec<&Value> = files
        .iter()
        .flat_map(|f| &f.groups)
        .map(|g| &g.schema)
        .collect();
    let krate = Crate::generate(&schemas, setup)?;
    let mut runner = krate.build()?;
    report(files, &krate, &mut runner, 0)
}

/// Runs every test of `files` through a built crate whose schemas `first..` are the files'
/// groups in order (a crate may hold other schemas before them: a test's own, say).
pub fn report(
    files: &[SuiteFile],
    krate: &Crate,
    runner: &mut Runner,
    first: usize,
) -> Result<Report, String> {
    let mut report = Report::default();
    let mut index = first;
    for file in files {
        let mut groups = Vec::new();
        for group in &file.groups {
            let refusal = krate.refusal(index).map(Refusal::of);
            let mut tests = Vec::new();
            for case in &group.tests {
                let outcome = match refusal {
                    Some(_) => Outcome::Refused,
                    None => judge(runner.verdict(index, &case.data)?, case.valid),
                };
                tests.push((case.description.clone(), outcome));
            }
            groups.push(GroupReport {
                description: group.description.clone(),
                refusal,
                tests,
            });
            index += 1;
        }
        report.files.push(FileReport {
            name: file.name.clone(),
            groups,
        });
    }
    Ok(report)
}

/// A test's outcome from the two paths' verdicts and the suite's.
pub fn judge(verdict: Verdict, valid: bool) -> Outcome {
    let say = |ok: bool| if ok { "valid" } else { "invalid" };
    match verdict.validator {
        Err(unreadable) => Outcome::Failed(format!(
            "the strict reader refuses the data ({unreadable}); the suite says {}",
            say(valid)
        )),
        Ok(problem) => {
            let exact = problem.is_none();
            if exact == valid && verdict.scanner == valid {
                return Outcome::Passed;
            }
            let mut why = format!(
                "the suite says {}, the validator {}",
                say(valid),
                say(exact)
            );
            if let Some(p) = problem {
                why.push_str(&format!(" ({p})"));
            }
            why.push_str(&format!(", the scanner {}", say(verdict.scanner)));
            Outcome::Failed(why)
        }
    }
}
