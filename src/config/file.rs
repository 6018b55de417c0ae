//! Reading configuration text: valkey.conf line rules (split by `util::quote`'s
//! `sdssplitargs`), `include`, merging `--name value` command-line options, and the fatal
//! start-up error.
//!
//! As in Valkey, the config file, then stdin (`-`), then the command-line options rendered as
//! config lines, are concatenated and parsed as one text, so a line number in an error counts
//! from the top of the file even for a command-line option. Included files are parsed on
//! their own, with their own line numbers.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::directives::{file_only, lookup};
use super::glob::glob_match;
use super::kind::{Arity, Directive, Support, Value};
use super::Config;
use crate::util::quote::{repr, split_args};
use crate::util::strerror;

/// Deepest chain of `include`s followed; deeper is almost certainly an include loop.
const INCLUDE_DEPTH_MAX: usize = 16;

/// Where a rejected line came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    Stdin,
    CommandLine,
    /// Text handed to [`Config::load_str`].
    Text,
}

/// A configuration error that stops start-up. `Display` gives Valkey's fatal message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The config file or an included file could not be read.
    Open { path: PathBuf, reason: String },
    /// A line was rejected. `line_no` counts from 1; `line` is the trimmed line.
    Line { origin: Origin, line_no: usize, line: String, reason: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Open { path, reason } => {
                write!(f, "Fatal error, can't open config file '{}': {reason}", path.display())
            }
            ConfigError::Line { origin, line_no, line, reason } => {
                writeln!(f)?;
                writeln!(
                    f,
                    "*** FATAL CONFIG FILE ERROR ({} {}) ***",
                    env!("CARGO_PKG_NAME"),
                    env!("CARGO_PKG_VERSION")
                )?;
                writeln!(f, "Reading the configuration file, at line {line_no}")?;
                writeln!(f, ">>> '{line}'")?;
                writeln!(f, "{reason}")?;
                write!(f, "{origin}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for Origin {
    /// The last line of the fatal error: `(from config file '/etc/valkey.conf')`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "(from config file '{}')", path.display()),
            Origin::Stdin => write!(f, "(from the config read from stdin)"),
            Origin::CommandLine => write!(f, "(from the command line options)"),
            Origin::Text => write!(f, "(from a configuration string)"),
        }
    }
}

/// Why one line was rejected: a message to wrap with its location, or an error from a file
/// it included (which already carries its own location).
enum LineError {
    Reason(String),
    Nested(ConfigError),
}

impl From<String> for LineError {
    fn from(reason: String) -> Self {
        LineError::Reason(reason)
    }
}

impl From<&str> for LineError {
    fn from(reason: &str) -> Self {
        LineError::Reason(reason.to_string())
    }
}

/// What became of an accepted line.
enum Accepted {
    Applied,
    /// A table directive set to something other than its default.
    Set(&'static Directive),
}

/// Applies configuration text to a `Config`, line by line.
struct Loader {
    config: Config,
    /// The first `save` line replaces the defaults; later ones add save points.
    save_seen: bool,
    include_depth: usize,
    /// Directives already warned about ([`Support::NoEffect`], [`Support::Tunes`]): once each.
    warned: Vec<&'static str>,
}

impl Loader {
    fn new() -> Loader {
        Loader { config: Config::default(), save_seen: false, include_depth: 0, warned: Vec::new() }
    }

    /// Parses the concatenation of `parts` as one text; each part keeps its origin.
    fn load_parts(&mut self, parts: &[(String, Origin)]) -> Result<(), ConfigError> {
        let text: String = parts.iter().map(|(t, _)| t.as_str()).collect();
        let mut part_ends = Vec::with_capacity(parts.len());
        let mut end = 0;
        for (t, origin) in parts {
            end += t.len();
            part_ends.push((end, origin));
        }
        let mut offset = 0;
        for (index, raw) in text.split('\n').enumerate() {
            let line = raw.trim_matches([' ', '\t', '\r', '\n']);
            let line_start = offset;
            offset += raw.len() + 1;
            let origin = || {
                part_ends
                    .iter()
                    .find(|(end, _)| line_start < *end)
                    .or(part_ends.last())
                    .map_or(Origin::Text, |(_, o)| (*o).clone())
            };
            match self.line(line) {
                Ok(Accepted::Applied) => {}
                Ok(Accepted::Set(d)) => self.warn_once(d, index + 1, &origin()),
                Err(LineError::Nested(nested)) => return Err(nested),
                Err(LineError::Reason(reason)) => {
                    return Err(ConfigError::Line {
                        origin: origin(),
                        line_no: index + 1,
                        line: line.to_string(),
                        reason,
                    })
                }
            }
        }
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<Accepted, LineError> {
        if line.is_empty() || line.starts_with('#') {
            return Ok(Accepted::Applied);
        }
        let argv = split_args(line.as_bytes()).ok_or("Unbalanced quotes in configuration line")?;
        let Some(first) = argv.first() else { return Ok(Accepted::Applied) };
        let name = String::from_utf8_lossy(first).to_ascii_lowercase();
        let args = argv[1..].iter().map(|a| utf8(a)).collect::<Result<Vec<_>, _>>()?;
        if let Some(d) = lookup(&name) {
            self.directive(d, args)?;
            let set = d.support != Support::Acts && d.differs_from_default(&self.config);
            return Ok(if set { Accepted::Set(d) } else { Accepted::Applied });
        }
        let applied = match (name.as_str(), args.as_slice()) {
            ("include", [path]) => self.include(path),
            ("rename-command", [from, to]) => self.rename(from, to),
            ("user", [_, ..]) => {
                self.config.general.users.push(args.clone());
                Ok(())
            }
            _ => match file_only(&name, &args) {
                Some(result) => result.map_err(LineError::from),
                None => Err("Bad directive or wrong number of arguments".into()),
            },
        };
        applied.map(|()| Accepted::Applied)
    }

    /// `rename-command from to`, checked against the names in effect after the lines before
    /// it, with Valkey's errors.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), LineError> {
        let renames = &self.config.general.renames;
        let in_effect = |name: &str| {
            let name = name.to_ascii_lowercase();
            let renamed_to = renames.iter().any(|(_, t)| t.eq_ignore_ascii_case(&name));
            let renamed_away = renames.iter().any(|(f, _)| *f == name);
            renamed_to || (super::is_command(&name) && !renamed_away)
        };
        if !in_effect(from) {
            return Err("No such command in rename-command".into());
        }
        if !to.is_empty() && in_effect(to) && !to.eq_ignore_ascii_case(from) {
            return Err("Target command name already exists".into());
        }
        // A command renamed twice keeps its table name as the origin.
        let from = from.to_ascii_lowercase();
        let origin =
            renames.iter().find(|(_, t)| t.eq_ignore_ascii_case(&from)).map(|(f, _)| f.clone());
        let renames = &mut self.config.general.renames;
        match origin {
            Some(o) => {
                renames.retain(|(f, _)| *f != o);
                renames.push((o, to.to_string()));
            }
            None => renames.push((from, to.to_string())),
        }
        Ok(())
    }

    /// Records, once per directive, that a line set a directive without effect here or for
    /// a feature ferrokey lacks.
    fn warn_once(&mut self, d: &'static Directive, line_no: usize, origin: &Origin) {
        if self.warned.contains(&d.name) {
            return;
        }
        self.warned.push(d.name);
        let us = env!("CARGO_PKG_NAME");
        let text = match d.support {
            Support::NoEffect(reason) => format!("has no effect in {us}: {reason}"),
            Support::Tunes(feature) => {
                format!("is stored for when {us} has {}, which it lacks", feature.name())
            }
            Support::Acts | Support::Gate(_) => return,
        };
        let at = format!("at line {line_no} {origin}");
        self.config.warnings.push(format!("Config directive '{}' {at} {text}", d.name));
    }

    /// Applies one table directive. A multi-argument directive given a single argument
    /// splits it again, so `save "900 1 300 10"` works (and `save ""` stays one empty one).
    fn directive(&mut self, d: &Directive, args: Vec<String>) -> Result<(), LineError> {
        let args = match d.arity() {
            Arity::Single if args.len() != 1 => return Err("wrong number of arguments".into()),
            Arity::Multi if args.len() == 1 && !args[0].is_empty() => {
                let split = split_args(args[0].as_bytes())
                    .ok_or("Unbalanced quotes in configuration line")?;
                split.iter().map(|a| utf8(a)).collect::<Result<Vec<_>, _>>()?
            }
            _ => args,
        };
        // `save ""` clears; any other `save` line after the first adds save points.
        let clears = args.len() == 1 && args[0].is_empty();
        let mut value = d.parse(&args)?;
        if let Value::Save(points) = &mut value {
            if self.save_seen && !clears {
                points.splice(0..0, self.config.save.iter().copied());
            }
            self.save_seen = true;
        }
        Ok(d.apply(&mut self.config, value)?)
    }

    /// `include path`: relative to the working directory; a wildcard in the file name part
    /// includes every match in name order, and no match is not an error (as Valkey's glob).
    fn include(&mut self, path: &str) -> Result<(), LineError> {
        if self.include_depth >= INCLUDE_DEPTH_MAX {
            return Err(format!("include nesting deeper than {INCLUDE_DEPTH_MAX} levels").into());
        }
        let path = Path::new(path);
        let files = match path.file_name().map(|n| n.to_string_lossy()) {
            Some(name) if name.contains(['*', '?', '[']) => glob_dir(path, name.as_bytes()),
            _ => vec![path.to_path_buf()],
        };
        self.include_depth += 1;
        let result = files.iter().try_for_each(|file| {
            let text = read_text(file)?;
            self.load_parts(&[(text, Origin::File(file.clone()))])
        });
        self.include_depth -= 1;
        result.map_err(LineError::Nested)
    }
}

fn utf8(arg: &[u8]) -> Result<String, LineError> {
    String::from_utf8(arg.to_vec()).map_err(|_| "argument must be valid UTF-8".into())
}

/// The files in `path`'s directory whose names match the glob `pattern`, sorted.
fn glob_dir(path: &Path, pattern: &[u8]) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| glob_match(pattern, e.file_name().as_encoded_bytes(), false))
        .map(|e| dir.join(e.file_name()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Reads a config file. Bytes that are not UTF-8 (in comments, say) become U+FFFD.
fn read_text(path: &Path) -> Result<String, ConfigError> {
    let open_error =
        |e: std::io::Error| ConfigError::Open { path: path.to_path_buf(), reason: strerror(&e) };
    let bytes = std::fs::read(path).map_err(open_error)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Builds the configuration from the command line (the arguments after the program name):
/// `[config-file | -] [--name value [value ...]] ...`, as Valkey's `main()`.
///
/// A first argument that does not start with `-` is the config file (returned as an absolute
/// path, for CONFIG REWRITE). A `-` as the first or last argument reads config from stdin.
/// Each `--name` starts a directive whose values are the following arguments, up to the next
/// `--`-prefixed one; `--save` with no value means `save ""`.
pub fn from_args(args: &[String]) -> Result<(Config, Option<PathBuf>), ConfigError> {
    let mut rest = args;
    let mut file = None;
    if let Some(first) = args.first().filter(|a| !a.starts_with('-')) {
        let path = std::path::absolute(first).unwrap_or_else(|_| PathBuf::from(first));
        file = Some(path);
        rest = &args[1..];
    }
    let (options, from_stdin) = options_text(rest, file.is_none());
    let mut parts = Vec::new();
    if let Some(path) = &file {
        parts.push((read_text(path)?, Origin::File(path.clone())));
    }
    if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| ConfigError::Open { path: PathBuf::from("-"), reason: strerror(&e) })?;
        parts.push((text, Origin::Stdin));
    }
    parts.push((format!("\n{options}"), Origin::CommandLine));
    let mut loader = Loader::new();
    loader.load_parts(&parts)?;
    Ok((loader.config, file))
}

/// Renders `--name value` options as config lines, as Valkey's `main()` does; also says
/// whether a `-` asked for stdin. `first_is_option` is true when no config file was given,
/// so `rest[0]` was the program's first argument.
fn options_text(rest: &[String], first_is_option: bool) -> (String, bool) {
    let mut options = String::new();
    let mut from_stdin = false;
    // Whether the last `--name` already has a value: until it has one, even an argument
    // starting with `--` is taken as its value.
    let mut has_value = true;
    for (j, arg) in rest.iter().enumerate() {
        let is_last = j + 1 == rest.len();
        if arg == "-" && ((j == 0 && first_is_option) || is_last) {
            from_stdin = true;
        } else if has_value && arg.starts_with("--") {
            if !options.is_empty() {
                options.push('\n');
            }
            options.push_str(&arg[2..]);
            options.push(' ');
            let words = split_args(arg.as_bytes()).map_or(1, |w| w.len());
            has_value = words > 1;
            let next_is_option = rest.get(j + 1).is_some_and(|n| n.starts_with("--"));
            if words == 1 && arg.eq_ignore_ascii_case("--save") && (next_is_option || is_last) {
                options.push_str("\"\"");
                has_value = true;
            }
        } else {
            options.push_str(&repr(arg.as_bytes()));
            options.push(' ');
            has_value = true;
        }
    }
    (options, from_stdin)
}

impl Config {
    /// Loads a config file (no command-line options).
    pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
        let mut loader = Loader::new();
        loader.load_parts(&[(read_text(path)?, Origin::File(path.to_path_buf()))])?;
        Ok(loader.config)
    }

    /// Loads configuration text, as if it were a file's content.
    pub fn load_str(text: &str) -> Result<Config, ConfigError> {
        let mut loader = Loader::new();
        loader.load_parts(&[(text.to_string(), Origin::Text)])?;
        Ok(loader.config)
    }
}

/// The default text of a directive as the arguments its parser takes.
pub(crate) fn default_args(d: &Directive) -> Vec<String> {
    let words = split_args(d.default.as_bytes()).unwrap_or_default();
    let words: Vec<String> =
        words.iter().map(|w| String::from_utf8_lossy(w).into_owned()).collect();
    match d.arity() {
        Arity::Single => vec![words.into_iter().next().unwrap_or_default()],
        Arity::Multi => words,
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
pub(crate) mod tests;
