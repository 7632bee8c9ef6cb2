//! The `interai` command line: `serve` runs an instance, `admin …` manages it.

fn main() {}
