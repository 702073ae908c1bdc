//! The data/ tables, one typed loader each, compiled in from the files (parsed once where a
//! caller asks often): boards and targets (`boards`, data/boards.toml), the board-power rows and
//! emulated cycles (`board`), device power profiles (`power`), radio profiles (`radio`), battery
//! chemistries (`battery`), cipher status, image sizes and emulator error (`mcu`), the built-in
//! sensor data set (`dataset`), regional radio limits (`region`), receive windows and wake-ups
//! (`receive`), chip sleep currents (`chip_sleep`), on-chip crypto engines (`engines`), NIST LWC
//! implementations emulated as candidates (`nistlwc`), and the checks over them (`physics`). The
//! engine, the link and `choose` read data/ only through here; mcu/boardfile.py is the Python
//! loader of data/boards.toml.
pub mod battery;
pub mod board;
pub mod boards;
pub mod chip_sleep;
pub mod dataset;
pub mod engines;
pub mod mcu;
pub mod nistlwc;
pub mod physics;
pub mod power;
pub mod radio;
pub mod receive;
pub mod region;
