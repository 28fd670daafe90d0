import { defineConfig } from 'vitest/config';

// Two projects: `fast` (everything but the real Expo toolchain) and `expo` (installs Expo SDK 56
// into .cache/expo-toolchain once, then builds, deploys and opens previews in headless Chromium).
// `npm test` runs them one after the other (the expo files one at a time: real exports use the
// whole machine), so the heavy one never slows the fast one down.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'fast',
          // Builds run in bubblewrap: installed first when missing (root).
          globalSetup: ['tests/bubblewrap-setup.ts'],
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/expo/**', '**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'expo',
          globalSetup: ['tests/bubblewrap-setup.ts'],
          include: ['tests/expo/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
