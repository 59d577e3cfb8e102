//! Writes every weft top-level design as Verilog into the directory given.
//!
//! `cargo xtask verilog` runs this and checks what it writes: each line of
//! output names a file and, after a tab, the check it gets beyond lint.
//! Memory images a design reads with `$readmemh` are written beside it.

use std::{env, fs, path::PathBuf, process::ExitCode};

fn main() -> ExitCode {
    let Some(out_dir) = env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: weft-verilog <output directory>");
        return ExitCode::from(2);
    };
    if let Err(err) = fs::create_dir_all(&out_dir) {
        eprintln!("weft-verilog: cannot create {}: {err}", out_dir.display());
        return ExitCode::FAILURE;
    }
    // The whole switch's block structs are many MiB, built and moved on
    // the stack in a debug build: more than the main thread's 8 MiB holds.
    let designs = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(weft_hdl::emit::designs)
        .map(|emitting| emitting.join());
    let designs = match designs {
        Ok(Ok(designs)) => designs,
        _ => {
            eprintln!("weft-verilog: the emitting thread failed");
            return ExitCode::FAILURE;
        }
    };
    let designs = match designs {
        Ok(designs) => designs,
        Err(err) => {
            eprintln!(
                "weft-verilog: {err}; rebuild it with `cargo xtask firmware`, or point \
                 WEFT_FIRMWARE at a good one"
            );
            return ExitCode::FAILURE;
        }
    };
    for design in designs {
        let widened = weft_hdl::emit::widened_negations(&design.verilog);
        if !widened.is_empty() {
            eprintln!(
                "weft-verilog: {} widens a negation before it applies (write it as an XOR \
                 with 1, see weft_hdl::emit::widened_negations):\n{}",
                design.name,
                widened.join("\n")
            );
            return ExitCode::FAILURE;
        }
        for (name, text) in &design.data_files {
            let path = out_dir.join(name);
            if let Err(err) = fs::write(&path, text) {
                eprintln!("weft-verilog: cannot write {}: {err}", path.display());
                return ExitCode::FAILURE;
            }
        }
        let path = out_dir.join(format!("{}.v", design.name));
        if let Err(err) = fs::write(&path, design.verilog) {
            eprintln!("weft-verilog: cannot write {}: {err}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{}\t{}", path.display(), design.check.word());
    }
    ExitCode::SUCCESS
}
