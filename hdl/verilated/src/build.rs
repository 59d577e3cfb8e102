//! From Verilog text to a loadable library: Verilator, the port shim, the
//! C++ compiler, cached by a digest of what went in.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::{cache, PortDecl, Storage};

/// Changes whenever the shim changes, so that an old cached build is not
/// taken for a new one.
const SHIM_VERSION: &str = "weft-verilated shim 1";

/// Verilator's options beside the sources (part of the cache key):
/// rust-hdl's Verilog is linted where it is emitted, so only the model is
/// wanted here; large files are split so that the C++ compiles in parallel.
const VERILATOR_FLAGS: [&str; 6] = [
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
    "-Wno-UNOPTFLAT",
    "--output-split",
    "20000",
];

/// How the C++ is compiled (part of the cache key too).
const CXX_FLAGS: [&str; 5] = ["-std=c++17", "-fPIC", "-O1", "-w", "-c"];

/// The file of a finished build that lists its ports.
const PORTS_FILE: &str = "ports.tsv";

/// A built design, ready for [`crate::Model::load`].
#[derive(Clone, Debug)]
pub struct Built {
    /// The shared library.
    pub library: PathBuf,
    /// The top-level ports, in the shim's order.
    pub ports: Vec<PortDecl>,
    /// Whether this call built it (false: found in the cache).
    pub fresh: bool,
}

/// Why a design could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// A tool is missing (`verilator`, `g++`): install it
    /// (`apt-get install verilator g++`).
    ToolMissing(&'static str),
    /// A tool ran and failed; what it printed last.
    ToolFailed {
        /// The tool.
        tool: &'static str,
        /// The end of what it printed.
        output: String,
    },
    /// Verilator's header for the model lists no ports the shim can reach.
    NoPorts(PathBuf),
    /// Reading or writing the build directory failed.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ToolMissing(tool) => {
                write!(
                    f,
                    "`{tool}` is not installed (apt-get install verilator g++)"
                )
            }
            BuildError::ToolFailed { tool, output } => write!(f, "{tool} failed:\n{output}"),
            BuildError::NoPorts(header) => {
                write!(f, "{} declares no ports", header.display())
            }
            BuildError::Io(path, error) => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for BuildError {}

/// Builds `verilog`, whose top module is `top`, into a shared library under
/// `cache` (a directory per digest of the Verilog, the Verilator version
/// and the shim), or finds it there already built. `progress` hears each
/// step of a build that has to run (it takes minutes for a large design).
pub fn build(
    verilog: &str,
    top: &str,
    cache: &Path,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Built, BuildError> {
    let version = tool_output("verilator", Command::new("verilator").arg("--version"))?;
    let mut digest = Sha256::new();
    let flags = format!("{} {}", VERILATOR_FLAGS.join(" "), CXX_FLAGS.join(" "));
    for part in [SHIM_VERSION, &flags, version.trim(), top, verilog] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    let key: String = digest.finalize()[..cache::DIGEST_BYTES]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let finished = cache.join(format!("{top}-{key}"));
    if let Some(built) = cached(&finished, top) {
        keep_only_recent(cache, top, &finished);
        return Ok(built);
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| BuildError::Io(path, error)
    };
    // Built beside the cache entry and renamed into place when complete,
    // so that a build interrupted, or another process building the same
    // design at once, never leaves a half-built entry behind.
    let dir = cache.join(format!(
        "{top}-{key}{}{}",
        cache::BUILDING,
        std::process::id()
    ));
    let library = library_in(&dir, top);
    let _ = fs::remove_dir_all(&dir);
    let objects = dir.join("obj");
    fs::create_dir_all(&objects).map_err(io(&objects))?;
    let source = dir.join(format!("{top}.v"));
    fs::write(&source, verilog).map_err(io(&source))?;

    progress("verilating");
    tool_output(
        "verilator",
        Command::new("verilator")
            .args(["--cc", "--top-module", top, "--Mdir"])
            .arg(&objects)
            .args(VERILATOR_FLAGS)
            .arg(&source),
    )?;
    let header = objects.join(format!("V{top}.h"));
    let header_text = fs::read_to_string(&header).map_err(io(&header))?;
    let header_ports = parse_header(&header_text);
    if header_ports.is_empty() {
        return Err(BuildError::NoPorts(header));
    }
    let shim = objects.join("weft_shim.cpp");
    fs::write(&shim, shim_source(top, &header_ports)).map_err(io(&shim))?;
    let ports: Vec<PortDecl> = header_ports.into_iter().map(|port| port.decl).collect();

    let include = verilator_include()?;
    let mut sources: Vec<PathBuf> = fs::read_dir(&objects)
        .map_err(io(&objects))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "cpp"))
        .collect();
    sources.push(include.join("verilated.cpp"));
    sources.push(include.join("verilated_threads.cpp"));
    sources.sort();
    let total = sources.len();
    let queue = Mutex::new(sources.into_iter().enumerate());
    let failure = Mutex::new(None);
    let done = Mutex::new(0usize);
    let compiling = Mutex::new(progress);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let next = queue.lock().map(|mut q| q.next()).ok().flatten();
                let Some((index, cpp)) = next else { return };
                if failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                    return;
                }
                let object = objects.join(format!("{index}.o"));
                let compiled = tool_output(
                    "g++",
                    Command::new("g++")
                        .args(CXX_FLAGS)
                        .arg("-I")
                        .arg(&objects)
                        .arg("-I")
                        .arg(&include)
                        .arg("-I")
                        .arg(include.join("vltstd"))
                        .arg(&cpp)
                        .arg("-o")
                        .arg(&object),
                );
                match compiled {
                    Ok(_) => {
                        if let (Ok(mut done), Ok(mut progress)) = (done.lock(), compiling.lock()) {
                            *done += 1;
                            progress(&format!("compiled {done} of {total}"));
                        }
                    }
                    Err(error) => {
                        if let Ok(mut failure) = failure.lock() {
                            failure.get_or_insert(error);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(error) = failure.into_inner().ok().flatten() {
        return Err(error);
    }
    let objects_list: Vec<PathBuf> = (0..total)
        .map(|index| objects.join(format!("{index}.o")))
        .collect();
    tool_output(
        "g++",
        Command::new("g++")
            .arg("-shared")
            .arg("-o")
            .arg(&library)
            .args(&objects_list)
            .arg("-lpthread"),
    )?;
    // The objects and generated C++ are hundreds of MB for the switch.
    let _ = fs::remove_dir_all(&objects);
    let ports_file = dir.join(PORTS_FILE);
    fs::write(&ports_file, ports_file_text(&ports)).map_err(io(&ports_file))?;
    if let Err(error) = fs::rename(&dir, &finished) {
        // Another process may have finished the same build first.
        let _ = fs::remove_dir_all(&dir);
        return cached(&finished, top).ok_or(BuildError::Io(finished, error));
    }
    let removed = keep_only_recent(cache, top, &finished);
    if let (true, Ok(progress)) = (removed > 0, compiling.into_inner()) {
        progress(&format!("removed {removed} older builds of {top}"));
    }
    Ok(Built {
        library: library_in(&finished, top),
        ports,
        fresh: true,
    })
}

/// Marks the build in `in_use` used now and prunes `cache` around it
/// ([`cache::prune`]); how many directories it removed.
fn keep_only_recent(cache: &Path, top: &str, in_use: &Path) -> usize {
    cache::mark_used(&in_use.join(PORTS_FILE));
    let used_at = |build: &Path| fs::metadata(build.join(PORTS_FILE)).ok()?.modified().ok();
    cache::prune(cache, top, in_use, used_at).len()
}

/// The shared library of `top`'s build in `dir`.
fn library_in(dir: &Path, top: &str) -> PathBuf {
    dir.join(format!("lib{top}.so"))
}

/// The finished build of `top` in `dir`, if there is one.
fn cached(dir: &Path, top: &str) -> Option<Built> {
    let library = library_in(dir, top);
    let ports = parse_ports_file(&fs::read_to_string(dir.join(PORTS_FILE)).ok()?)?;
    library.exists().then_some(Built {
        library,
        ports,
        fresh: false,
    })
}

/// Runs `command` of `tool`; what it printed, or why it failed.
fn tool_output(tool: &'static str, command: &mut Command) -> Result<String, BuildError> {
    let output = command.output().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => BuildError::ToolMissing(tool),
        _ => BuildError::ToolFailed {
            tool,
            output: error.to_string(),
        },
    })?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    if output.status.success() {
        Ok(text)
    } else {
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(BuildError::ToolFailed {
            tool,
            output: tail.join("\n"),
        })
    }
}

/// Verilator's C++ include directory (`verilated.h` and its sources),
/// from `verilator --getenv VERILATOR_ROOT`.
fn verilator_include() -> Result<PathBuf, BuildError> {
    let root = tool_output(
        "verilator",
        Command::new("verilator").args(["--getenv", "VERILATOR_ROOT"]),
    )?;
    Ok(PathBuf::from(root.trim()).join("include"))
}

/// A top-level port as Verilator's model header declares it.
struct HeaderPort<'a> {
    /// The model's C++ member holding it (Verilator's escaped name).
    member: &'a str,
    /// The port.
    decl: PortDecl,
}

/// The top-level ports Verilator's model header declares, in order: lines
/// `VL_IN8(&name,msb,lsb);`, `VL_OUTW(&name,msb,lsb,words);` and so on
/// (`verilated.h`'s port macros). The shim's port indices are positions
/// in this list.
fn parse_header(header: &str) -> Vec<HeaderPort<'_>> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("VL_IN")
                .map(|r| (false, r))
                .or_else(|| line.strip_prefix("VL_OUT").map(|r| (true, r)));
            let (output, rest) = rest?;
            let (kind, rest) = rest.split_once("(&")?;
            let args = rest.strip_suffix(");")?;
            let mut fields = args.split(',');
            let escaped = fields.next()?;
            let msb: u32 = fields.next()?.parse().ok()?;
            let lsb: u32 = fields.next()?.parse().ok()?;
            let storage = match kind {
                "8" => Storage::Byte,
                "16" => Storage::Half,
                "" => Storage::Word,
                "64" => Storage::Double,
                "W" => Storage::Words(fields.next()?.parse().ok()?),
                _ => return None,
            };
            Some(HeaderPort {
                member: escaped,
                decl: PortDecl {
                    name: unescape(escaped),
                    bits: msb - lsb + 1,
                    output,
                    storage,
                },
            })
        })
        .collect()
}

/// A Verilog name from Verilator's C++ one, which writes a character not
/// allowed in C++ as `__0` and its two hex digits (`$` is `__024`).
fn unescape(escaped: &str) -> String {
    let mut name = String::new();
    let mut rest = escaped;
    while let Some(at) = rest.find("__0") {
        name.push_str(&rest[..at]);
        let hex = rest.get(at + 3..at + 5);
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(byte) => {
                name.push(char::from(byte));
                rest = &rest[at + 5..];
            }
            None => {
                name.push_str("__0");
                rest = &rest[at + 3..];
            }
        }
    }
    name.push_str(rest);
    name
}

/// The C++ shim: `extern "C"` functions to make, evaluate and delete the
/// model, and the address of port `index` (its position in `ports`).
fn shim_source(top: &str, ports: &[HeaderPort]) -> String {
    let cases: String = ports
        .iter()
        .enumerate()
        .map(|(index, port)| format!("        case {index}: return &m.{};\n", port.member))
        .collect();
    format!(
        "// Generated by weft-verilated: the C ABI of V{top}.\n\
         #include \"V{top}.h\"\n\
         #include \"verilated.h\"\n\
         #include <cstdint>\n\
         struct WeftHandle {{\n    VerilatedContext context;\n    V{top} model{{&context, \"top\"}};\n}};\n\
         extern \"C\" {{\n\
         void* weft_verilated_new() {{ return new WeftHandle; }}\n\
         void weft_verilated_delete(void* h) {{ delete static_cast<WeftHandle*>(h); }}\n\
         void weft_verilated_eval(void* h) {{ static_cast<WeftHandle*>(h)->model.eval(); }}\n\
         void* weft_verilated_port(void* h, uint32_t index) {{\n    V{top}& m = static_cast<WeftHandle*>(h)->model;\n    switch (index) {{\n{cases}        default: return nullptr;\n    }}\n}}\n\
         }}\n"
    )
}

/// The ports as the build's port list records them: a line each of name,
/// bits, `in`/`out`, and storage words (0 for the scalar kinds, named).
fn ports_file_text(ports: &[PortDecl]) -> String {
    ports
        .iter()
        .map(|port| {
            let storage = match port.storage {
                Storage::Byte => "8".to_string(),
                Storage::Half => "16".to_string(),
                Storage::Word => "32".to_string(),
                Storage::Double => "64".to_string(),
                Storage::Words(words) => format!("w{words}"),
            };
            let direction = if port.output { "out" } else { "in" };
            format!("{}\t{}\t{direction}\t{storage}\n", port.name, port.bits)
        })
        .collect()
}

/// The ports of a port list written by [`ports_file_text`]; `None` if it
/// is not one.
fn parse_ports_file(text: &str) -> Option<Vec<PortDecl>> {
    text.lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?.to_string();
            let bits = fields.next()?.parse().ok()?;
            let output = match fields.next()? {
                "in" => false,
                "out" => true,
                _ => return None,
            };
            let storage = match fields.next()? {
                "8" => Storage::Byte,
                "16" => Storage::Half,
                "32" => Storage::Word,
                "64" => Storage::Double,
                words => Storage::Words(words.strip_prefix('w')?.parse().ok()?),
            };
            Some(PortDecl {
                name,
                bits,
                output,
                storage,
            })
        })
        .collect::<Option<Vec<_>>>()
        .filter(|ports| !ports.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\
class Vt VL_NOT_FINAL : public VerilatedModel {
  public:
    VL_IN8(&clock,0,0);
    VL_IN16(&csr__024address,11,0);
    VL_OUT8(&ingress__0243__024ready,0,0);
    VL_IN(&ingress__0243__024dw0,31,0);
    VL_OUT64(&wide__024q,39,0);
    VL_INW(&ingress__0243__024payload,127,0,4);
};";

    #[test]
    fn ports_are_read_from_verilators_header_with_their_verilog_names() {
        let ports = parse_header(HEADER);
        let summary: Vec<_> = ports
            .iter()
            .map(|p| {
                (
                    p.decl.name.as_str(),
                    p.decl.bits,
                    p.decl.output,
                    p.decl.storage,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("clock", 1, false, Storage::Byte),
                ("csr$address", 12, false, Storage::Half),
                ("ingress$3$ready", 1, true, Storage::Byte),
                ("ingress$3$dw0", 32, false, Storage::Word),
                ("wide$q", 40, true, Storage::Double),
                ("ingress$3$payload", 128, false, Storage::Words(4)),
            ]
        );
    }

    #[test]
    fn the_port_list_reads_back_as_written() {
        let ports: Vec<PortDecl> = parse_header(HEADER).into_iter().map(|p| p.decl).collect();
        assert_eq!(parse_ports_file(&ports_file_text(&ports)), Some(ports));
        assert_eq!(parse_ports_file("clock\t1\tsideways\t8\n"), None);
        assert_eq!(parse_ports_file(""), None);
    }

    #[test]
    fn the_shim_returns_each_port_by_its_index_in_the_header() {
        let shim = shim_source("t", &parse_header(HEADER));
        assert!(shim.contains("case 0: return &m.clock;"));
        assert!(shim.contains("case 5: return &m.ingress__0243__024payload;"));
        assert!(!shim.contains("case 6:"));
    }

    #[test]
    fn a_name_without_escapes_is_kept_and_a_broken_escape_is_left_as_is() {
        assert_eq!(unescape("plain_name"), "plain_name");
        assert_eq!(unescape("odd__0zz"), "odd__0zz");
    }
}
