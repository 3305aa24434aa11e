/**
 * Conditioning: what every ffmpeg run that feeds the silence logic or the recognizer applies to the
 * audio. Telephone recordings often carry a DC offset (a cheap ADC, a line card) and mains hum (50 or
 * 60 Hz and its harmonics); neither is speech, yet both keep a level detector above any threshold, so
 * a silence scan finds no silence and the recognizer hears one endless segment. The telephony band
 * starts at 300 Hz (ITU-T G.712), so a high-pass below it removes both and leaves speech alone.
 *
 * Two 2nd-order Butterworth sections at 200 Hz (a 4th-order slope): DC removed entirely, 50 Hz hum down
 * about 48 dB, 60 Hz 44 dB, 100 Hz 25 dB, 150 Hz 12 dB, while 300 Hz loses 1.6 dB and 400 Hz under 0.5 dB.
 */

/** The high-pass corner, Hz: below the telephony band (300 Hz and up), above mains hum and its first harmonics. */
export const CONDITIONING_HIGHPASS_HZ = 200;

/** ffmpeg filters that condition a stream, in order (append after resampling: cheapest at the lower rate). */
export function conditioningFilters(): string[] {
  const section = `highpass=f=${CONDITIONING_HIGHPASS_HZ}:poles=2`;
  return [section, section];
}
