//! The core's files form layers without cycles: every path a file names through `crate::`,
//! `super::`, `self::` or one of its own child modules (in `use` declarations and in code) is
//! resolved to the file that holds it, and
//! - no two files import from each other, directly or around a longer cycle;
//! - a file imports from another part of the crate only if that part sits in a lower layer
//!   ([`LAYERS`]): dialect, then topic and pattern, then the `Matcher` trait, then the shared
//!   pieces of the algorithms, then the algorithms (none reaching into another), then the
//!   engine. A part missing from the table is checked for cycles only.
//!
//! Comments, string and character literals and visibility paths (`pub(in super::super)`) are
//! skipped; doc links are comments, so they may name any module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The parts of the crate, by path prefix under `src/`, and their layers: a part may import
/// from parts of lower layers only. The longest prefix that matches a file names its part.
const LAYERS: &[(&str, u32)] = &[
    ("bytes.rs", 0),
    ("dialect.rs", 0),
    ("hint.rs", 0),
    ("sync.rs", 0),
    ("error.rs", 1),
    ("topic", 2),
    ("pattern.rs", 3),
    ("matcher.rs", 5),
    ("registry.rs", 6),
    ("relation", 4),
    // The relation walk of the tries (`trie`'s word trie and `cstrie`).
    ("matchers/shared/relation_walk.rs", 6),
    ("matchers/shared/mod.rs", 7),
    ("matchers/shared/door.rs", 7),
    ("matchers/shared/word_trie", 7),
    ("matchers/shared/level_index", 8),
    // The oracle: the other algorithms' tests compare against it.
    ("matchers/naive.rs", 8),
    ("fields", 9),
    ("store", 9),
    ("matchers/trie", 9),
    ("matchers/cstrie", 9),
    ("matchers/optimized_bitmap", 9),
    ("matchers/inverted_bitmap", 9),
    // `auto` switches between two algorithms through their public types.
    ("matchers/auto", 10),
    // The `Algorithm` enum builds every algorithm.
    ("matchers/mod.rs", 11),
    ("engine", 12),
    ("lib.rs", 13),
];

/// A token of Rust source, as far as imports need: an identifier, `::`, or one punctuation
/// character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Path,
    Punct(char),
}

/// The tokens of `source`, without comments, literals and lifetimes.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= chars.len() {
                    break;
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (at(i + 1) == '"' || (at(i + 1) == '#' && at(i + 2) != '[')) {
            // A raw string: r"...", r#"..."#.
            let mut hashes = 0;
            i += 1;
            while at(i) == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                // The backslash and the escaped character, then up to the closing quote.
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if (word == "b" || word == "br") && (at(i) == '\'' || at(i) == '"' || at(i) == '#') {
                // A byte literal: skip the prefix, the literal follows.
                continue;
            }
            out.push(Token::Ident(word));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::Path);
            i += 2;
        } else if c.is_whitespace() || c.is_ascii_digit() {
            i += 1;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// One import: the absolute module path it names (segments under the crate root) and the line
/// of source it came from, for messages.
#[derive(Debug, Clone)]
struct Import {
    path: Vec<String>,
    text: String,
}

/// The paths `source`, the file of module `module`, imports from the crate.
fn imports(module: &[String], source: &str) -> Vec<Import> {
    let toks = tokens(source);
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(w)) => Some(w.as_str()),
        _ => None,
    };
    let punct = |i: usize, c: char| toks.get(i) == Some(&Token::Punct(c));
    // Child modules declared by `mod x;` at the file's top level.
    let mut children = BTreeSet::new();
    let mut level = 0usize;
    for (k, t) in toks.iter().enumerate() {
        match t {
            Token::Punct('{') => level += 1,
            Token::Punct('}') => level = level.saturating_sub(1),
            Token::Ident(w) if w == "mod" && level == 0 && punct(k + 2, ';') => {
                if let Some(name) = ident(k + 1) {
                    children.insert(name.to_owned());
                }
            }
            _ => {}
        }
    }
    // Inline modules (`mod tests { ... }`) open around the current token, with the brace
    // depth at which each closes.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
                continue;
            }
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        if ident(i) == Some("pub") && punct(i + 1, '(') {
            // A visibility such as `pub(in super::super)`: no import.
            while i < toks.len() && !punct(i, ')') {
                i += 1;
            }
            i += 1;
            continue;
        }
        if ident(i) == Some("mod") {
            if let Some(name) = ident(i + 1) {
                if punct(i + 2, '{') {
                    inline.push((name.to_owned(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            i += 2;
            continue;
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        let is_use = ident(i) == Some("use");
        let start = if is_use { i + 1 } else { i };
        // A path starts at `crate`, `super`, `self` or a child module, and is followed by `::`.
        let first = ident(start);
        let rooted = matches!(first, Some("crate" | "super" | "self"))
            || first.is_some_and(|w| children.contains(w) && inline.is_empty());
        let preceded_by_path = i > 0 && toks[i - 1] == Token::Path;
        if !rooted || preceded_by_path || toks.get(start + 1) != Some(&Token::Path) {
            i += 1;
            continue;
        }
        let (paths, end) = use_tree(&toks, start);
        let text = describe(&toks[start..end]);
        for relative in paths {
            if let Some(path) = absolute(&here, &relative) {
                found.push(Import {
                    path,
                    text: text.clone(),
                });
            }
        }
        i = end;
    }
    found
}

/// The paths of the use tree (or plain path) starting at token `i`, and the index after it.
fn use_tree(toks: &[Token], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        match toks.get(i) {
            Some(Token::Ident(w)) => {
                prefix.push(w.clone());
                i += 1;
            }
            Some(Token::Punct('*')) => {
                i += 1;
                return (vec![prefix], i);
            }
            Some(Token::Punct('{')) => {
                i += 1;
                let mut all = Vec::new();
                loop {
                    match toks.get(i) {
                        Some(Token::Punct('}')) => {
                            i += 1;
                            break;
                        }
                        Some(Token::Punct(',')) => i += 1,
                        None => break,
                        _ => {
                            let (inner, next) = use_tree(toks, i);
                            for p in inner {
                                let mut full = prefix.clone();
                                full.extend(p.into_iter().filter(|s| s != "self"));
                                all.push(full);
                            }
                            // `as` renames: skip the new name.
                            i = next;
                            if toks.get(i) == Some(&Token::Ident("as".into())) {
                                i += 2;
                            }
                        }
                    }
                }
                return (all, i);
            }
            _ => return (vec![prefix], i),
        }
        if toks.get(i) == Some(&Token::Path) {
            i += 1;
        } else {
            return (vec![prefix], i);
        }
    }
}

/// The source text of some tokens, for messages.
fn describe(toks: &[Token]) -> String {
    toks.iter()
        .map(|t| match t {
            Token::Ident(w) => w.clone(),
            Token::Path => "::".into(),
            Token::Punct(c) => c.to_string(),
        })
        .collect()
}

/// `relative`, named inside module `here`, as a path from the crate root.
fn absolute(here: &[String], relative: &[String]) -> Option<Vec<String>> {
    let mut path: Vec<String> = here.to_vec();
    let mut rest = relative;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            path.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().map(String::as_str) == Some("super") {
        path.pop()?;
        rest = &rest[1..];
    }
    path.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(path)
}

/// The module path of the file at `file` (relative to `src/`, `/`-separated).
fn module_of(file: &str) -> Vec<String> {
    let stem = file.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Every file's imports as edges to other files: file -> (file it imports from -> the import
/// texts).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The import graph of `files` (path under `src/` -> source).
fn graph(files: &BTreeMap<String, String>) -> Graph {
    let by_module: BTreeMap<Vec<String>, &String> =
        files.keys().map(|f| (module_of(f), f)).collect();
    let mut edges = Graph::new();
    for (file, source) in files {
        let targets = edges.entry(file.clone()).or_default();
        for import in imports(&module_of(file), source) {
            // The longest prefix of the path that is a file's module is the file that holds it.
            let target = (0..=import.path.len())
                .rev()
                .find_map(|n| by_module.get(&import.path[..n]));
            if let Some(&target) = target {
                if target != file {
                    targets
                        .entry(target.clone())
                        .or_default()
                        .insert(import.text);
                }
            }
        }
    }
    edges
}

/// The groups of files that import from each other (strongly connected components of more than
/// one file), each sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iterative over files in name order.
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(BTreeMap::keys) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            loop {
                let w = s.stack.pop().expect("v is on the stack");
                s.on_stack.remove(w);
                group.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// Each cycle with the imports that close it, one line per import.
fn cycle_report(graph: &Graph) -> Vec<String> {
    cycles(graph)
        .into_iter()
        .map(|group| {
            let mut lines = vec![format!("files importing from each other: {group:?}")];
            for a in &group {
                for (b, texts) in &graph[a] {
                    if group.contains(b) {
                        for t in texts {
                            lines.push(format!("  {a} -> {b}: {t}"));
                        }
                    }
                }
            }
            lines.join("\n")
        })
        .collect()
}

/// The part of the crate `file` belongs to, and its layer, if [`LAYERS`] lists it.
fn part(file: &str) -> Option<(&'static str, u32)> {
    LAYERS
        .iter()
        .filter(|(prefix, _)| {
            file == *prefix
                || file
                    .strip_prefix(prefix)
                    .is_some_and(|r| r.starts_with('/'))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .copied()
}

/// Every import from one part into another that is not in a lower layer.
fn layer_report(graph: &Graph) -> Vec<String> {
    let mut wrong = Vec::new();
    for (a, targets) in graph {
        let Some((pa, la)) = part(a) else { continue };
        for (b, texts) in targets {
            let Some((pb, lb)) = part(b) else { continue };
            if pa != pb && lb >= la {
                for t in texts {
                    wrong.push(format!(
                        "{a} ({pa}, layer {la}) imports from {b} ({pb}, layer {lb}): {t}"
                    ));
                }
            }
        }
    }
    wrong
}

/// Every `.rs` file under `dir`, by path relative to `root`.
fn read_tree(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable source folder")
        .map(|e| e.expect("readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_tree(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under the root");
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.insert(rel, std::fs::read_to_string(&path).expect("readable file"));
        }
    }
}

fn core_sources() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, &mut files);
    files
}

#[test]
fn no_file_imports_from_a_file_that_imports_from_it() {
    let report = cycle_report(&graph(&core_sources()));
    assert!(report.is_empty(), "import cycles:\n{}", report.join("\n"));
}

#[test]
fn every_part_imports_only_from_lower_layers() {
    let report = layer_report(&graph(&core_sources()));
    assert!(
        report.is_empty(),
        "imports against the layers:\n{}",
        report.join("\n")
    );
}

/// The checker on sources made up for it: what it must find, and what it must not.
mod checker {
    use std::collections::BTreeMap;

    use super::{cycle_report, graph, imports, layer_report, module_of};

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(f, s)| ((*f).to_owned(), (*s).to_owned()))
            .collect()
    }

    fn paths(module: &str, source: &str) -> Vec<String> {
        imports(&module_of(module), source)
            .into_iter()
            .map(|i| i.path.join("::"))
            .collect()
    }

    #[test]
    fn use_trees_resolve_to_absolute_paths() {
        let source = "
            use crate::a::{b, c::{d, self}, e as f};
            use super::g::*;
            use self::h::I;
            use kid::K;
            use std::collections::HashMap;
            mod kid;
            fn f() { crate::x::y(); let _ = super::z::W; other::thing(); }
        ";
        assert_eq!(
            paths("m/n.rs", source),
            [
                "a::b",
                "a::c::d",
                "a::c",
                "a::e",
                "m::g",
                "m::n::h::I",
                "m::n::kid::K",
                "x::y",
                "m::z::W"
            ]
        );
    }

    #[test]
    fn comments_literals_and_visibilities_are_not_imports() {
        let source = r#"
            // use crate::a;
            /* crate::b::c */
            /// [`crate::d`]
            pub(in super::super) struct S;
            pub(crate) fn f() -> &'static str { "crate::e::f" }
            const C: char = 'x';
            fn g<'a>(_: &'a str) -> u8 { b'\'' }
        "#;
        assert!(paths("m/n.rs", source).is_empty());
    }

    #[test]
    fn inline_modules_shift_super() {
        let source = "mod tests { use super::X; use super::super::y::Z; }";
        assert_eq!(paths("m/n.rs", source), ["m::n::X", "m::y::Z"]);
    }

    #[test]
    fn a_cycle_through_three_files_is_found_and_a_chain_is_not() {
        let cyclic = files(&[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::b::B;"),
            ("b.rs", "use crate::c::C;"),
            ("c.rs", "fn f() { crate::a::g(); }"),
        ]);
        let report = cycle_report(&graph(&cyclic));
        assert_eq!(report.len(), 1, "{report:?}");
        assert!(
            report[0].contains(r#"["a.rs", "b.rs", "c.rs"]"#),
            "{report:?}"
        );
        let chain = files(&[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::b::B;"),
            ("b.rs", "use crate::c::C;"),
            ("c.rs", "use std::fmt;"),
        ]);
        assert!(cycle_report(&graph(&chain)).is_empty());
    }

    #[test]
    fn a_child_importing_its_parent_that_imports_it_is_a_cycle() {
        let cyclic = files(&[
            ("x/mod.rs", "mod y; use y::Y; pub struct X;"),
            ("x/y.rs", "use super::X; pub struct Y;"),
        ]);
        assert_eq!(cycle_report(&graph(&cyclic)).len(), 1);
    }

    #[test]
    fn an_import_up_the_layers_is_reported() {
        let upward = files(&[
            ("dialect.rs", "use crate::engine::Engine;"),
            ("engine/mod.rs", "use crate::dialect::Dialect;"),
        ]);
        let report = layer_report(&graph(&upward));
        assert_eq!(report.len(), 1, "{report:?}");
        assert!(
            report[0].starts_with("dialect.rs (dialect.rs, layer 0) imports from engine/mod.rs")
        );
        let sideways = files(&[
            ("matchers/trie/mod.rs", "use crate::matchers::cstrie::X;"),
            ("matchers/cstrie/mod.rs", "pub struct X;"),
        ]);
        assert_eq!(layer_report(&graph(&sideways)).len(), 1);
    }
}
