//! A device of a split render, as the workers see it ([`SplitDevice`]):
//! it renders chunks into a sum kept where it renders, and reads the sum
//! back.

use crate::backend::{ProgressCallback, RenderOutput};
use crate::render::film_sum::DeviceFilmSum;
use device::integrator::SampleRange;

/// One device's chunks of a split render, summed where it renders them: a
/// [`DeviceFilmSum`], or a test's stand-in for a device.
pub trait SplitDevice {
    /// Renders the sample indices `samples` of every pixel, whole, into the
    /// sum; returns the samples per pixel rendered.
    fn render(&mut self, samples: SampleRange, progress: ProgressCallback) -> anyhow::Result<u32>;

    /// The sum so far, in host memory.
    fn read_back(&mut self) -> anyhow::Result<RenderOutput>;

    /// The sum, in host memory, after the device's last chunk.
    fn finish(self) -> anyhow::Result<RenderOutput>;
}

impl SplitDevice for DeviceFilmSum<'_> {
    fn render(&mut self, samples: SampleRange, progress: ProgressCallback) -> anyhow::Result<u32> {
        DeviceFilmSum::render(self, samples, progress)
    }

    fn read_back(&mut self) -> anyhow::Result<RenderOutput> {
        DeviceFilmSum::read_back(self)
    }

    fn finish(self) -> anyhow::Result<RenderOutput> {
        DeviceFilmSum::finish(self)
    }
}
