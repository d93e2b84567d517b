//! The row writer: a thread that takes each finished render, hashes its film,
//! checks it against the other runs that must render the same image,
//! measures its error against the study's reference image if it has one,
//! and appends its rows to `runs.csv` and `kernels.csv`. The GPU goes on to the
//! next render meanwhile, so the runner adds almost nothing to a row's time
//! (`runner_ms`, summarised in the manifest).

use super::films::{FilmChecks, film_hash};
use super::output::OutFiles;
use super::records::{CsvAppender, KernelRow, RunRow};
use super::rows::kernel_rows;
use device::film::FixedRgb;
use renderer::backend::gpu::profile::GpuProfile;
use renderer::io::image::FloatImage;
use renderer::render::compare::compare;
use renderer::render::tone::linear;
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread::JoinHandle;

/// One finished render on its way to the files. Its film and profile are
/// moved, not copied: hashing the film and summing a profile of many
/// thousand launches happen on the writer thread, off the GPU's path.
pub struct Finished {
    /// Its row, without the film hash yet.
    pub row: RunRow,
    /// Its GPU profile, for `kernels.csv`.
    pub profile: Option<GpuProfile>,
    /// Its film, to hash.
    pub film: Vec<FixedRgb>,
    /// The samples per pixel its film holds.
    pub spp: u32,
    /// Its study's reference image, to measure its error against.
    pub reference: Option<Arc<FloatImage>>,
}

/// `runs.csv` and `kernels.csv`, open for appending: the one place that
/// writes a repetition's rows, for one process and for rank 0 of an MPI
/// job alike.
pub struct RowFiles {
    runs: CsvAppender,
    kernels: CsvAppender,
}

impl RowFiles {
    /// Opens the files of `files` for appending.
    pub fn open(files: &OutFiles) -> anyhow::Result<Self> {
        Ok(RowFiles {
            runs: CsvAppender::open::<RunRow>(&files.runs)?,
            kernels: CsvAppender::open::<KernelRow>(&files.kernels)?,
        })
    }

    /// Appends one repetition: its kernel rows, then its run row. The run
    /// row goes last because it commits the repetition, so a resume drops
    /// kernel rows that have none (see `output::repair_records`).
    pub fn append<'k>(&mut self, row: &RunRow, kernels: impl IntoIterator<Item = &'k KernelRow>) -> anyhow::Result<()> {
        kernels.into_iter().try_for_each(|k| self.kernels.append(k))?;
        self.runs.append(row)
    }
}

/// The writer thread's state.
struct Appenders {
    files: Option<RowFiles>,
    rows: Vec<RunRow>,
    /// The kernel rows made, kept when there is no file for them.
    kernel_rows: Vec<KernelRow>,
    checks: Arc<Mutex<FilmChecks>>,
}

impl Appenders {
    fn write(&mut self, mut f: Finished) -> anyhow::Result<()> {
        f.row.film_hash = film_hash(&f.film);
        if let Some(reference) = &f.reference {
            let image = FloatImage {
                width: f.row.width,
                height: f.row.height,
                pixels: linear(&f.film, f.spp)?,
                linear: true,
            };
            let m = compare(&image, reference).metrics;
            (f.row.rmse, f.row.rel_mse, f.row.mae, f.row.flip) =
                (Some(m.rmse), Some(m.rel_mse), Some(m.mae), Some(m.flip));
        }
        lock(&self.checks).check(&f.row);
        let kernels = kernel_rows(&f.row, f.profile.as_ref());
        match &mut self.files {
            Some(files) => files.append(&f.row, &kernels)?,
            None => self.kernel_rows.extend(kernels),
        }
        self.rows.push(f.row);
        Ok(())
    }
}

/// Locks the film checks, which the writer (adding rows) and the runner
/// (skipping the rest of a study that failed) share.
fn lock(checks: &Mutex<FilmChecks>) -> MutexGuard<'_, FilmChecks> {
    checks.lock().expect("film checks poisoned")
}

/// The running writer thread.
pub struct RowWriter {
    send: mpsc::Sender<Finished>,
    thread: JoinHandle<(Vec<RunRow>, Vec<KernelRow>, anyhow::Result<()>)>,
    checks: Arc<Mutex<FilmChecks>>,
}

/// What the writer did once every row sent to it was handled.
pub struct WriterOutcome {
    /// Every row, the resumed ones first.
    pub rows: Vec<RunRow>,
    /// The kernel rows of the rows made, when they were kept in memory
    /// only (no files); empty otherwise.
    pub kernels: Vec<KernelRow>,
    /// Why the writer stopped early, if it did: the first row it could not
    /// append.
    pub result: anyhow::Result<()>,
    checks: Arc<Mutex<FilmChecks>>,
}

impl WriterOutcome {
    /// Rows written elsewhere (gathered from the ranks of an MPI job),
    /// with the film checks over them.
    pub fn of(rows: Vec<RunRow>) -> Self {
        let mut checks = FilmChecks::default();
        rows.iter().for_each(|r| checks.check(r));
        WriterOutcome {
            rows,
            kernels: Vec::new(),
            result: Ok(()),
            checks: Arc::new(Mutex::new(checks)),
        }
    }

    /// The film checks over every row.
    pub fn checks(&self) -> MutexGuard<'_, FilmChecks> {
        lock(&self.checks)
    }
}

impl RowWriter {
    /// Starts the thread after the `resumed` rows, whose films count in the
    /// checks; the rows are appended to `files`, or kept in memory only
    /// without them.
    pub fn start(files: Option<&OutFiles>, resumed: &[RunRow]) -> anyhow::Result<Self> {
        let mut checks = FilmChecks::default();
        for r in resumed {
            checks.check(r);
        }
        let checks = Arc::new(Mutex::new(checks));
        let mut appenders = Appenders {
            files: files.map(RowFiles::open).transpose()?,
            rows: resumed.to_vec(),
            kernel_rows: Vec::new(),
            checks: checks.clone(),
        };
        let (send, receive) = mpsc::channel::<Finished>();
        let thread = std::thread::spawn(move || {
            let result = receive.iter().try_for_each(|f| appenders.write(f));
            (appenders.rows, appenders.kernel_rows, result)
        });
        Ok(RowWriter { send, thread, checks })
    }

    /// Hands a finished render to the thread.
    pub fn send(&self, finished: Finished) -> anyhow::Result<()> {
        self.send
            .send(finished)
            .map_err(|_| anyhow::anyhow!("the row writer stopped (see the error after this one)"))
    }

    /// The first film mismatch of `study`, if it has one so far.
    pub fn mismatch(&self, study: &str) -> Option<String> {
        lock(&self.checks).mismatches.get(study).cloned()
    }

    /// Waits until every row sent is written.
    pub fn finish(self) -> anyhow::Result<WriterOutcome> {
        let RowWriter { send, thread, checks } = self;
        // The thread ends when the channel closes.
        drop(send);
        let (rows, kernels, result) = thread.join().map_err(|_| anyhow::anyhow!("the row writer panicked"))?;
        Ok(WriterOutcome {
            rows,
            kernels,
            result,
            checks,
        })
    }
}
