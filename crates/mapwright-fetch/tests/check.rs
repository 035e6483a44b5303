//! Live URL checks.
