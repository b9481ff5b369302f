// AURATown's map, clock and movement (paper §4, Appendix A4; reference digest §2.2–2.4).
// Pure functions over configuration: no I/O, no clocks.

export interface Location {
  readonly name: string;
  readonly type: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly capacity: number;
  readonly owner: string | null;
  readonly description: string;
}

export interface TownMap {
  readonly width: number;
  readonly height: number;
  readonly locations: readonly Location[];
}

export interface Clock {
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
}

export interface ClockConfig {
  readonly tickMinutes: number;
  readonly startHour: number;
  readonly endHour: number;
}

/** Daytime ticks per day: 06:00 … 22:30 with 30-minute ticks is 34. */
export function ticksPerDay(clock: ClockConfig): number {
  return ((clock.endHour - clock.startHour) * 60) / clock.tickMinutes;
}

/**
 * Tick t's time. Each day runs startHour … endHour − one tick; the tick after the last one is the
 * next day's startHour (the reference release jumps to 06:30 on later days, an artefact we drop).
 */
export function clockAt(tick: number, clock: ClockConfig): Clock {
  const perDay = ticksPerDay(clock);
  const day = Math.floor(tick / perDay) + 1;
  const minutes = clock.startHour * 60 + (tick % perDay) * clock.tickMinutes;
  return { day, hour: Math.floor(minutes / 60), minute: minutes % 60 };
}

const isClock = (c: Readonly<Record<string, number>>): c is Readonly<Record<string, number>> & Clock => c.day !== undefined && c.hour !== undefined && c.minute !== undefined;

/**
 * The clock of a `tick.started` record, which the catalogue types as numbers by name (each world
 * has its own clock): AURATown's tick plan (clockAt) always gives day, hour and minute. The record's
 * own object is the clock, as before it was typed: contexts and their hashes hold what it holds.
 */
export function clockOf(clock: Readonly<Record<string, number>>): Clock {
  if (!isClock(clock)) throw new Error(`tick.started clock ${JSON.stringify(clock)} lacks a day, hour or minute`);
  return clock;
}

export const minutesOfDay = (c: Clock): number => c.hour * 60 + c.minute;

/** Memory timestamps: minutes since day 1 00:00. */
export const simMinutes = (c: Clock): number => (c.day - 1) * 1440 + minutesOfDay(c);

export function formatClock(c: Clock): string {
  const h12 = c.hour % 12 === 0 ? 12 : c.hour % 12;
  return `${h12}:${String(c.minute).padStart(2, "0")} ${c.hour < 12 ? "AM" : "PM"} Day ${c.day}`;
}

export const hhmm = (c: Clock): string => `${String(c.hour).padStart(2, "0")}:${String(c.minute).padStart(2, "0")}`;

// Plans are re-read every tick; their few distinct times are parsed once (a pure memo).
const parsedTimes = new Map<string, number>();

export function parseHhmm(text: string): number {
  const known = parsedTimes.get(text);
  if (known !== undefined) return known;
  const minutes = parseTime(text);
  if (parsedTimes.size < 10_000) parsedTimes.set(text, minutes);
  return minutes;
}

function parseTime(text: string): number {
  const match = /^(\d{1,2}):(\d{2})$/.exec(text.trim());
  if (match === null) throw new Error(`expected a time as HH:MM, got '${text}'`);
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (hours > 23 || minutes > 59) throw new Error(`expected a time as HH:MM, got '${text}'`);
  return hours * 60 + minutes;
}

export const contains = (l: Location, x: number, y: number): boolean =>
  x >= l.x && x < l.x + l.width && y >= l.y && y < l.y + l.height;

export const centerOf = (l: Location): { x: number; y: number } => ({
  x: l.x + Math.floor(l.width / 2),
  y: l.y + Math.floor(l.height / 2),
});

/** First location (file order) whose rectangle holds the cell, or null on the road. */
export function locationAt(map: TownMap, x: number, y: number): Location | null {
  for (const l of map.locations) if (contains(l, x, y)) return l;
  return null;
}

export function locationNamed(map: TownMap, name: string): Location | null {
  return map.locations.find((l) => l.name === name) ?? null;
}

/**
 * One tick of walking toward the target's center: Manhattan, x first then y, `speed` cells, no
 * obstacles (as in the paper's simulator). Returns the new cell.
 */
export function stepToward(from: { x: number; y: number }, target: Location, speed: number): { x: number; y: number } {
  const goal = centerOf(target);
  let budget = speed;
  let { x, y } = from;
  const dx = goal.x - x;
  const moveX = Math.sign(dx) * Math.min(Math.abs(dx), budget);
  x += moveX;
  budget -= Math.abs(moveX);
  const dy = goal.y - y;
  const moveY = Math.sign(dy) * Math.min(Math.abs(dy), budget);
  y += moveY;
  return { x, y };
}
