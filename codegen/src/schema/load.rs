//! Loading a schema set: every `*.json` under a directory (or a base set with edits applied in
//! memory), indexed by `$id`; on load its resources, anchors and references are indexed
//! (`resources.rs`), every `$ref` is resolved (`refs.rs`) and every property must be described
//! (`descriptions.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::resources::Resources;
use super::uri::Uri;
use crate::error::{Error, Result};

/// One schema file of the set.
#[derive(Clone, Debug)]
pub struct SchemaFile {
    /// Path relative to the schema directory (with `/` separators on every platform).
    pub path: PathBuf,
    /// The file's `$id`.
    pub id: String,
    /// The parsed document.
    pub doc: Value,
}

/// A location inside the schema set: a file (by `$id`) and a JSON Pointer into it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// `$id` of the file.
    pub id: String,
    /// JSON Pointer inside the file (`""` is the file's root schema).
    pub pointer: String,
}

impl Location {
    /// The root schema of the file with `$id` `id`.
    pub fn root(id: &str) -> Location {
        Location {
            id: id.to_owned(),
            pointer: String::new(),
        }
    }
}

/// A loaded, reference-checked schema set.
#[derive(Clone, Debug)]
pub struct SchemaSet {
    dir: PathBuf,
    /// What generated files name as their source (`schemas/acp-v0.2`).
    source: String,
    files: BTreeMap<String, SchemaFile>,
    /// A standalone schema ([`SchemaSet::standalone`]): its root is a named type whatever it
    /// holds, and its properties need no `description`.
    standalone: bool,
    /// Resources, anchors, base URIs and references (`resources.rs`).
    resources: Resources,
}

impl SchemaSet {
    /// Reads every `*.json` under `dir` (recursively), indexes the files by `$id`, checks that
    /// every `$ref` resolves and that every property has a `description`. The checks that need
    /// the model (the kinds agree: envelope `kind` enum, the envelope's `allOf` dispatch and each
    /// body's `x-agh-kind`; no keyword the model does not carry) are `Model::build`'s; the
    /// pipeline's `load_model` runs both.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let docs = read_docs(&dir)?;
        let source = dir
            .file_name()
            .map(|n| format!("schemas/{}", n.to_string_lossy()))
            .unwrap_or_else(|| "schemas".into());
        Self::from_docs(dir, source, docs)
    }

    /// The set at `base` with the edits of the file `edits` applied in memory: a JSON object
    /// whose `edits` member lists RFC 6902 `add` operations, in order, each naming the `file`
    /// (relative to `base`) it applies to: `{"file": "envelope.schema.json", "op": "add",
    /// "path": "/allOf/-", "value": ...}`. The path `""` writes a whole file (a new schema); `-`
    /// appends to an array, an index inserts before that item, an object member is set. Unlike
    /// RFC 6902, an `add` into an array that already holds an equal item leaves the array as it
    /// is: edits can be applied to a set that already has them (a guide's edits, once a
    /// maintainer has performed the guide on the set itself). Then the set is loaded and checked
    /// as [`SchemaSet::load`] does (building its model checks the rest). `source` is what
    /// generated files name as their origin.
    pub fn load_edited(base: &Path, edits: &Path, source: &str) -> Result<Self> {
        let text = std::fs::read_to_string(edits)
            .map_err(|e| Error::new(edits, "", format!("cannot read: {e}")))?;
        let spec: Value = serde_json::from_str(&text)
            .map_err(|e| Error::new(edits, "", format!("invalid JSON: {e}")))?;
        let Some(list) = spec.get("edits").and_then(Value::as_array) else {
            return Err(Error::new(edits, "/edits", "`edits` must list the edits"));
        };
        Self::load_with_edits(base, list, edits, source)
    }

    /// [`SchemaSet::load_edited`] with the edits in memory; errors name them as `/edits/<i>` of
    /// `edits` (where they came from).
    pub fn load_with_edits(
        base: &Path,
        list: &[Value],
        edits: &Path,
        source: &str,
    ) -> Result<Self> {
        let mut docs = read_docs(base)?;
        for (i, edit) in list.iter().enumerate() {
            let at = format!("/edits/{i}");
            let field = |name: &str| {
                edit.get(name)
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::new(edits, &at, format!("`{name}` must be a string")))
            };
            if field("op")? != "add" {
                return Err(Error::new(edits, &at, "only `add` edits are supported"));
            }
            let (file, path) = (PathBuf::from(field("file")?), field("path")?);
            let Some(value) = edit.get("value").cloned() else {
                return Err(Error::new(edits, &at, "an `add` edit needs a `value`"));
            };
            if path.is_empty() {
                docs.retain(|(p, _)| *p != file);
                docs.push((file, value));
                continue;
            }
            let Some((_, doc)) = docs.iter_mut().find(|(p, _)| *p == file) else {
                return Err(Error::new(
                    edits,
                    &at,
                    format!("no file {} in the set", file.display()),
                ));
            };
            add(doc, path, value).map_err(|why| {
                Error::new(edits, &at, format!("{}: {path}: {why}", file.display()))
            })?;
        }
        docs.sort_by(|a, b| a.0.cmp(&b.0));
        Self::from_docs(base.to_path_buf(), source.to_owned(), docs)
    }

    fn from_docs(dir: PathBuf, source: String, docs: Vec<(PathBuf, Value)>) -> Result<Self> {
        let mut files = BTreeMap::new();
        for (rel, doc) in docs {
            let id = match doc.get("$id") {
                Some(Value::String(id)) if !id.is_empty() => id.clone(),
                Some(_) => {
                    return Err(Error::new(&rel, "/$id", "`$id` must be a non-empty string"))
                }
                None => return Err(Error::new(&rel, "", "missing `$id`")),
            };
            if let Some(other) = files.get(&id) {
                let other: &SchemaFile = other;
                return Err(Error::new(
                    &rel,
                    "/$id",
                    format!("duplicate `$id` {id} (also in {})", other.path.display()),
                ));
            }
            files.insert(id.clone(), SchemaFile { path: rel, id, doc });
        }
        if files.is_empty() {
            return Err(Error::new(&dir, "", "no *.json schema files found"));
        }
        let mut resources = Resources::default();
        for file in files.values() {
            resources.add_file(file)?;
        }
        let set = SchemaSet {
            dir,
            source,
            files,
            standalone: false,
            resources,
        };
        set.check_refs()?;
        for file in set.files() {
            super::descriptions::check_descriptions(file, &file.doc, "")?;
        }
        Ok(set)
    }

    /// A set of one standalone schema document (no `x-agh-envelope`, no kinds: a plain JSON
    /// Schema, as a test suite or a user's own document holds), named `path` in errors. Its `$id`
    /// (when it is a string) names it, else `base`: the URI its relative references resolve
    /// against. Its root is a named type whatever it holds (a boolean schema included), so a
    /// `$ref` to `#` is a reference to that type; its properties need no `description` (no docs
    /// are built from it). Every `$ref` must resolve inside the document.
    pub fn standalone(path: &str, doc: Value, base: &str) -> Result<Self> {
        let id = match doc.get("$id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => base.to_owned(),
        };
        let file = SchemaFile {
            path: PathBuf::from(path),
            id: id.clone(),
            doc,
        };
        let mut resources = Resources::default();
        resources.add_document(&file, &Uri::parse(base))?;
        let set = SchemaSet {
            dir: PathBuf::from(path),
            source: path.to_owned(),
            files: BTreeMap::from([(id, file)]),
            standalone: true,
            resources,
        };
        set.check_refs()?;
        Ok(set)
    }

    /// Whether this is a standalone schema ([`SchemaSet::standalone`]).
    pub fn is_standalone(&self) -> bool {
        self.standalone
    }

    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The directory the set was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What generated files name as the set's origin (`schemas/acp-v0.2`).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The files, ordered by path.
    pub fn files(&self) -> impl Iterator<Item = &SchemaFile> {
        let mut v: Vec<&SchemaFile> = self.files.values().collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v.into_iter()
    }

    /// The file with this `$id`.
    pub fn file(&self, id: &str) -> Option<&SchemaFile> {
        self.files.get(id)
    }

    /// The schema at a location.
    pub fn get(&self, loc: &Location) -> Option<&Value> {
        self.files.get(&loc.id)?.doc.pointer(&loc.pointer)
    }

    /// The path of the file with this `$id` (for error messages).
    pub fn path_of(&self, id: &str) -> PathBuf {
        self.files
            .get(id)
            .map(|f| f.path.clone())
            .unwrap_or_else(|| PathBuf::from(id))
    }

    /// An error located in the file with `$id` `id`.
    pub fn error(&self, id: &str, pointer: &str, message: impl Into<String>) -> Error {
        Error::new(self.path_of(id), pointer, message)
    }
}

/// Every `*.json` file under `dir`, parsed, in path order.
fn read_docs(dir: &Path) -> Result<Vec<(PathBuf, Value)>> {
    let mut paths = Vec::new();
    collect_json(dir, dir, &mut paths)?;
    paths.sort();
    let mut docs = Vec::new();
    for rel in paths {
        let text = std::fs::read_to_string(dir.join(&rel))
            .map_err(|e| Error::new(&rel, "", format!("cannot read: {e}")))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| Error::new(&rel, "", format!("invalid JSON: {e}")))?;
        docs.push((rel, doc));
    }
    Ok(docs)
}

/// RFC 6902 `add` of `value` at the non-empty JSON Pointer `path` in `doc`.
fn add(doc: &mut Value, path: &str, value: Value) -> std::result::Result<(), String> {
    let Some((parent, last)) = path.rsplit_once('/') else {
        return Err("a JSON Pointer starts with `/`".into());
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    let Some(target) = doc.pointer_mut(parent) else {
        return Err(format!("nothing at `{parent}`"));
    };
    match target {
        Value::Object(m) => {
            m.insert(last, value);
        }
        // Already there (the edits were performed on the set itself, as a guide tells a
        // maintainer to): an array that holds an equal item keeps it once.
        Value::Array(items) if items.contains(&value) => {}
        Value::Array(items) if last == "-" => items.push(value),
        Value::Array(items) => match last.parse::<usize>() {
            Ok(i) if i <= items.len() && (last == "0" || !last.starts_with('0')) => {
                items.insert(i, value)
            }
            _ => return Err(format!("`{last}` is not an index of `{parent}`")),
        },
        _ => return Err(format!("`{parent}` is neither an object nor an array")),
    }
    Ok(())
}

fn collect_json(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::new(dir, "", format!("cannot read directory: {e}")))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::new(dir, "", format!("cannot read directory: {e}")))?;
        let path = entry.path();
        if path.is_dir() {
            collect_json(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel: PathBuf = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
                .into();
            out.push(rel);
        }
    }
    Ok(())
}
