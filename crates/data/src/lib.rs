//! The data/ tables, one typed loader each, compiled in from the files (parsed once where a
//! caller asks often): boards and targets (`boards`, data/boards.toml), the board-power rows and
//! emulated cycles (`board`), device power profiles (`power`), radio profiles (`radio`), battery
//! chemistries (`battery`), cipher status, image sizes and emulator error (`mcu`), and the
//! built-in sensor data set (`dataset`). The engine, the link and `choose` read data/ only
//! through here; mcu/boardfile.py is the Python loader of data/boards.toml.
pub mod battery;
pub mod board;
pub mod boards;
pub mod dataset;
pub mod mcu;
pub mod power;
pub mod radio;
