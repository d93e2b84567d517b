//! Replays the kept fuzz corpus (`fuzz/corpus/`) through the fuzz targets'
//! own per-input functions, so CI checks on every run that no input the
//! fuzzer has kept panics (scene files, OBJ files, Mitsuba scenes, experiment
//! configs). A real fuzz pass is `scripts/fuzz`.

#[path = "../fuzz/src/lib.rs"]
mod harness;

use std::path::{Path, PathBuf};

/// Every file in `fuzz/corpus/<target>`, in a stable order.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "{} holds {} inputs; the kept corpus should have at least 20",
        dir.display(),
        files.len()
    );
    files
}

/// Runs `f` on each input, naming the input if it panics.
fn replay<T>(files: &[PathBuf], mut f: impl FnMut(&[u8]) -> T) -> Vec<T> {
    files
        .iter()
        .map(|path| {
            let data = std::fs::read(path).unwrap();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&data))) {
                Ok(out) => out,
                Err(_) => panic!("corpus input {} panics", path.display()),
            }
        })
        .collect()
}

/// How many outcomes were read (`Some(true)`) and how many refused
/// (`Some(false)`); the rest were skipped.
fn read_and_refused(outcomes: &[Option<bool>]) -> (usize, usize) {
    let count = |wanted| outcomes.iter().filter(|o| **o == Some(wanted)).count();
    (count(true), count(false))
}

#[test]
fn scene_loader_corpus_never_panics() {
    let outcomes = replay(&corpus("scene_loader"), |data| {
        harness::scene_loader(data).map(|r| r.is_ok())
    });
    let (ok, err) = read_and_refused(&outcomes);
    eprintln!(
        "{} scene inputs: {ok} load, {err} are refused, {} skipped",
        outcomes.len(),
        outcomes.len() - ok - err
    );
    assert!(ok >= 1, "no corpus scene loads");
    assert!(
        err >= 1,
        "every corpus scene loads; the corpus should hold broken ones too"
    );
}

#[test]
fn obj_import_corpus_never_panics() {
    let outcomes = replay(&corpus("obj_import"), |data| harness::obj_import(data).is_ok());
    let ok = outcomes.iter().filter(|&&ok| ok).count();
    eprintln!(
        "{} OBJ inputs: {ok} import, {} are refused",
        outcomes.len(),
        outcomes.len() - ok
    );
    assert!(outcomes.iter().any(|&ok| ok), "no corpus OBJ imports");
    assert!(outcomes.iter().any(|&ok| !ok), "every corpus OBJ imports");
}

#[test]
fn mitsuba_xml_corpus_never_panics() {
    let outcomes = replay(&corpus("mitsuba_xml"), |data| {
        harness::mitsuba_xml(data).map(|r| r.is_ok())
    });
    let (ok, err) = read_and_refused(&outcomes);
    eprintln!("{} Mitsuba inputs: {ok} are read, {err} are refused", outcomes.len());
    assert!(ok >= 5, "only {ok} corpus Mitsuba scenes are read");
    assert!(err >= 5, "only {err} corpus Mitsuba scenes are refused");
}

#[test]
fn generator_budget_counts_generated_primitives() {
    let scene = |generators: &str| format!("[render]\nwidth = 1\n{generators}");
    assert_eq!(harness::generated_primitives(&scene("")), 0);
    let rtiow = scene("[[generators]]\nkind = \"rtiow_final\"\n");
    assert_eq!(harness::generated_primitives(&rtiow), 4 * 11 * 11 + 4);
    let spheres = scene(
        "[[generators]]\nkind = \"displaced_sphere\"\nsubdivisions = 3\n\
         [[generators]]\nkind = \"displaced_sphere\"\nsubdivisions = 99\n",
    );
    assert_eq!(harness::generated_primitives(&spheres), 20 * 64 + 20 * (1 << 20));
    assert!(
        harness::scene_loader(spheres.as_bytes()).is_none(),
        "over budget: skipped"
    );
    assert!(harness::scene_loader(b"\xff").is_none(), "not UTF-8: skipped");
}

#[test]
fn experiment_config_corpus_never_panics() {
    let outcomes = replay(&corpus("experiment_config"), |data| {
        harness::experiment_config(data).map(|r| r.is_ok())
    });
    let (ok, err) = read_and_refused(&outcomes);
    eprintln!("{} config inputs: {ok} load, {err} are refused", outcomes.len());
    assert!(ok >= 5, "only {ok} corpus configs load");
    assert!(err >= 5, "only {err} corpus configs are refused");
}
