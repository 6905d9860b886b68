"""Pure metric functions: arrays in, numbers out. No files, no platform, no challenge."""
