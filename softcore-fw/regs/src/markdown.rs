//! Renders a register map as Markdown, for docs/registers.md.
//!
//! The text goes through `core::fmt::Write`, so the firmware's crates stay
//! `no_std`; `cargo xtask regs` writes it to a file and a test checks that
//! the file is current.

use core::fmt::{self, Write};

use crate::register::{Field, Register, RegisterBlock};

/// A whole register map: a window of the address space and the blocks in it.
#[derive(Clone, Copy, Debug)]
pub struct RegisterMap {
    /// The document's title.
    pub title: &'static str,
    /// What the map is and how it is accessed.
    pub doc: &'static str,
    /// First address of the window the blocks live in.
    pub base: u32,
    /// Bytes of the window.
    pub size: u32,
    /// The blocks, in address order.
    pub blocks: &'static [RegisterBlock],
    /// Maps of other windows, rendered after this one in the same document,
    /// so that one file describes every register the soft core reaches.
    pub companions: &'static [RegisterMap],
}

/// Writes `map` as a Markdown document: an address map, then each block's
/// registers and fields; then each of its companions the same way.
pub fn write_markdown<W: Write>(out: &mut W, map: &RegisterMap) -> fmt::Result {
    write_map(out, map)?;
    for companion in map.companions {
        writeln!(out)?;
        write_markdown(out, companion)?;
    }
    Ok(())
}

fn write_map<W: Write>(out: &mut W, map: &RegisterMap) -> fmt::Result {
    writeln!(out, "# {}", map.title)?;
    writeln!(out)?;
    writeln!(
        out,
        "<!-- Generated from weft-regs by `cargo xtask regs`; edit softcore-fw/regs/src, not this file. -->"
    )?;
    writeln!(out)?;
    writeln!(out, "{}", map.doc)?;
    writeln!(out)?;
    writeln!(
        out,
        "The window spans {}..{} ({} KiB).",
        Hex(map.base),
        Hex(map.base + map.size),
        map.size / 1024
    )?;
    writeln!(out)?;
    writeln!(out, "## Address map")?;
    writeln!(out)?;
    writeln!(
        out,
        "| block | base | instances × stride | entries × stride | end |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    for block in map.blocks {
        let layout = &block.layout;
        writeln!(
            out,
            "| [{name}](#{name}) | {} | {} × {} | {} × {} | {} |",
            Hex(layout.base),
            layout.instances,
            Hex(layout.stride),
            layout.entries,
            Hex(layout.entry_stride),
            Hex(block.end()),
            name = block.name,
        )?;
    }
    for block in map.blocks {
        write_block(out, block)?;
    }
    Ok(())
}

fn write_block<W: Write>(out: &mut W, block: &RegisterBlock) -> fmt::Result {
    let layout = &block.layout;
    writeln!(out)?;
    writeln!(out, "## {}", block.name)?;
    writeln!(out)?;
    writeln!(out, "{}", block.doc)?;
    writeln!(out)?;
    match (layout.instances, layout.entries) {
        (1, 1) => writeln!(out, "At {}.", Hex(layout.base))?,
        (1, entries) => writeln!(
            out,
            "Entry `e` (0..{entries}) at {} + e × {}.",
            Hex(layout.base),
            Hex(layout.entry_stride)
        )?,
        (instances, 1) => writeln!(
            out,
            "Instance `i` (0..{instances}) at {} + i × {}.",
            Hex(layout.base),
            Hex(layout.stride)
        )?,
        (instances, entries) => writeln!(
            out,
            "Instance `i` (0..{instances}), entry `e` (0..{entries}) at {} + i × {} + e × {}.",
            Hex(layout.base),
            Hex(layout.stride),
            Hex(layout.entry_stride)
        )?,
    }
    if block.registers.is_empty() {
        return Ok(());
    }
    if !block.entry_names.is_empty() {
        writeln!(out)?;
        writeln!(out, "| entry | offset | name | description |")?;
        writeln!(out, "|---|---|---|---|")?;
        for (index, entry) in block.entry_names.iter().enumerate() {
            let offset = index as u32 * layout.entry_stride;
            writeln!(
                out,
                "| {index} | {} | {} | {} |",
                Hex(offset),
                entry.name,
                entry.doc
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "| offset | register | access | description |")?;
    writeln!(out, "|---|---|---|---|")?;
    for register in block.registers {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            Hex(register.offset),
            register.name,
            register.access.abbreviation(),
            register.doc
        )?;
    }
    for register in block.registers {
        write_fields(out, block, register)?;
    }
    Ok(())
}

fn write_fields<W: Write>(out: &mut W, block: &RegisterBlock, register: &Register) -> fmt::Result {
    writeln!(out)?;
    writeln!(
        out,
        "### {}.{} ({})",
        block.name,
        register.name,
        Hex(register.offset)
    )?;
    writeln!(out)?;
    writeln!(out, "| bits | field | description |")?;
    writeln!(out, "|---|---|---|")?;
    for field in register.fields {
        writeln!(out, "| {} | {} | {} |", Bits(field), field.name, field.doc)?;
    }
    Ok(())
}

/// An address or offset in hex, in groups of four digits.
struct Hex(u32);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 > 0xFFFF {
            write!(f, "0x{:04X}_{:04X}", self.0 >> 16, self.0 & 0xFFFF)
        } else {
            write!(f, "0x{:X}", self.0)
        }
    }
}

/// A field's bit range, `msb:lsb` or a single bit.
struct Bits<'a>(&'a Field);

impl fmt::Display for Bits<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.width == 1 {
            write!(f, "{}", self.0.lsb)
        } else {
            write!(f, "{}:{}", self.0.msb(), self.0.lsb)
        }
    }
}
