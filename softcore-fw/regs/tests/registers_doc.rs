//! docs/registers.md is the register map rendered by weft-regs, and up to date.

use std::{fs, path::Path};

#[test]
fn docs_registers_md_matches_the_register_map() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/registers.md");
    let mut generated = String::new();
    weft_regs::write_markdown(&mut generated, &weft_regs::csr::MAP)
        .expect("writing to a String cannot fail");
    let on_disk = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/registers.md differs from the register map in softcore-fw/regs/src: \
         run `cargo xtask regs` to regenerate it"
    );
}

#[test]
fn rendering_lists_every_block_and_register() {
    let mut text = String::new();
    weft_regs::write_markdown(&mut text, &weft_regs::csr::MAP)
        .expect("writing to a String cannot fail");
    for block in weft_regs::csr::BLOCKS.iter().chain(weft_regs::soc::BLOCKS) {
        assert!(
            text.contains(&format!("\n## {}\n", block.name)),
            "{}",
            block.name
        );
        for register in block.registers {
            let heading = format!("\n### {}.{} (", block.name, register.name);
            assert!(text.contains(&heading), "{heading}");
        }
    }
    assert!(
        text.contains("| [window](#window) | 0x4001_0000 | 8 × 0x200 | 16 × 0x20 | 0x4001_1000 |")
    );
    assert!(text.contains("| 2:1 | ROLE | 0: disabled, 1: host, 2: endpoint, 3: fabric. |"));
    assert!(text.contains("\n# weft soft core peripheral registers\n"));
    assert!(text.contains("| [uart](#uart) | 0x2000_0000 | 1 × 0x100 | 1 × 0x100 | 0x2000_0100 |"));
    assert!(
        text.contains("| [timer](#timer) | 0x2000_1000 | 1 × 0x100 | 1 × 0x100 | 0x2000_1100 |")
    );
}
