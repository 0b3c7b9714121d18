/** Minor units per major unit: balances and prices are stored as integer hundredths. */
export const MINOR_PER_MAJOR = 100;

/** Decimal amount (e.g. `12.5`) → integer minor units (`1250`). Callers validate at most 2 decimals. */
export function toMinor(amount: number): number {
  return Math.round(amount * MINOR_PER_MAJOR);
}

/** Integer minor units → the decimal number shown in responses. */
export function fromMinor(minor: number): number {
  return minor / MINOR_PER_MAJOR;
}
