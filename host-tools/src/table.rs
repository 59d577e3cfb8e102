//! Plain-text tables with aligned columns, for human output.

/// A table: a header row and rows of cells, printed with columns padded to
/// their widest cell.
#[derive(Clone, Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers, every column left-aligned.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            right: vec![false; headers.len()],
            rows: Vec::new(),
        }
    }

    /// Aligns column `column` to the right (for numbers).
    pub fn right(mut self, column: usize) -> Table {
        if let Some(r) = self.right.get_mut(column) {
            *r = true;
        }
        self
    }

    /// Appends a row; missing cells are left empty and extra ones dropped.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines of text, each ending in a newline, without
    /// trailing spaces.
    pub fn render(&self) -> String {
        let cell = |row: &[String], i: usize| row.get(i).map_or("", String::as_str).to_owned();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, width) in widths.iter_mut().enumerate() {
                *width = (*width).max(cell(row, i).chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |row: &[String]| {
            let mut text = String::new();
            for (i, (width, right)) in widths.iter().zip(&self.right).enumerate() {
                let value = cell(row, i);
                let pad = width.saturating_sub(value.chars().count());
                if i > 0 {
                    text.push_str("  ");
                }
                if *right {
                    text.push_str(&" ".repeat(pad));
                    text.push_str(&value);
                } else {
                    text.push_str(&value);
                    text.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&self.headers);
        for row in &self.rows {
            line(row);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_to_the_widest_cell() {
        let mut table = Table::new(&["name", "value"]).right(1);
        table.row(vec!["rx".into(), "5".into()]);
        table.row(vec!["dropped".into(), "1234".into()]);
        assert_eq!(
            table.render(),
            "name     value\nrx           5\ndropped   1234\n"
        );
    }
}
