//! What the board benches' tests share.

use weft_boards::generate::File;

/// Makes the first `from` in the bench file `name` of `files` read `to`:
/// a change the bench must notice. The file must be there and hold `from`.
pub fn change(files: &mut [File], name: &str, from: &str, to: &str) {
    let Some(file) = files.iter_mut().find(|f| f.name == name) else {
        panic!("the bench has no file {name}");
    };
    assert!(file.text.contains(from), "{name} has `{from}`");
    file.text = file.text.replacen(from, to, 1);
}
