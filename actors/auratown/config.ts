// AURATown configuration: the map, the roster with profiles and daily routines, and the knobs the
// paper leaves open (movement speed, incident rate, routine noise). Everything here is data that
// enters the log once, in `episode.started`, so a log replays without any outside file.
import { Schema } from "effect";
import mapJson from "../../data/aura/town_map.json" with { type: "json" };
import type { TownMap } from "./town.ts";

const LocationSchema = Schema.Struct({
  name: Schema.NonEmptyString,
  type: Schema.NonEmptyString,
  x: Schema.Int,
  y: Schema.Int,
  width: Schema.Int,
  height: Schema.Int,
  capacity: Schema.Int,
  owner: Schema.NullOr(Schema.String),
  description: Schema.String,
});

const RoutineChoice = Schema.Struct({ activity: Schema.NonEmptyString, location: Schema.NonEmptyString });

const RoutineEntry = Schema.Struct({
  at: Schema.String,
  activity: Schema.NonEmptyString,
  location: Schema.NonEmptyString,
  /** Other ways the same slot may go on a given day, drawn from the agent's routine stream. */
  alternatives: Schema.optional(Schema.Array(RoutineChoice)),
});

const ProfileSchema = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  age: Schema.Int,
  occupation: Schema.String,
  personality: Schema.String,
  emoji: Schema.String,
  home: Schema.NonEmptyString,
  workplaces: Schema.Array(Schema.String),
  openHours: Schema.Tuple([Schema.Int, Schema.Int]),
  relationships: Schema.Record(Schema.String, Schema.String),
  routine: Schema.Array(RoutineEntry),
});

export const TownConfigSchema = Schema.Struct({
  map: Schema.Struct({ width: Schema.Int, height: Schema.Int, locations: Schema.Array(LocationSchema) }),
  clock: Schema.Struct({ tickMinutes: Schema.Int, startHour: Schema.Int, endHour: Schema.Int }),
  speed: Schema.Int,
  agents: Schema.Array(ProfileSchema),
  extraAgents: Schema.Int,
  memory: Schema.Struct({
    capacity: Schema.Int,
    reflectionThreshold: Schema.Int,
    decay: Schema.Number,
    weights: Schema.Struct({ recency: Schema.Number, importance: Schema.Number, relevance: Schema.Number }),
  }),
  conversation: Schema.Struct({ cooldownTicks: Schema.Int }),
  perception: Schema.Struct({ attention: Schema.Int }),
  incidents: Schema.Struct({ rate: Schema.Number, stressfulShare: Schema.Number }),
  routineNoise: Schema.Struct({ delayProbability: Schema.Number }),
  features: Schema.Struct({ conversations: Schema.Boolean, reflection: Schema.Boolean }),
});

export type TownConfig = typeof TownConfigSchema.Type;
export type Profile = TownConfig["agents"][number];
export type RoutineEntryType = Profile["routine"][number];

export const baseMap: TownMap = {
  width: mapJson.width,
  height: mapJson.height,
  locations: mapJson.locations.map((l) => ({
    name: l.name,
    type: l.type,
    x: l.x,
    y: l.y,
    width: l.width,
    height: l.height,
    capacity: l.capacity,
    owner: l.owner ?? null,
    description: l.description,
  })),
};

const r = (at: string, activity: string, location: string, alternatives?: { activity: string; location: string }[]) =>
  alternatives === undefined ? { at, activity, location } : { at, activity, location, alternatives };

/**
 * The five residents (paper Table 7, reference §2.5). Routines name their place explicitly: the
 * release mapped activities to places by keyword and sent agents to the wrong place (e.g. "read the
 * news" → library at breakfast, "go home" → library). Workplaces use real location names: the
 * release's "Library" never matched "Town Library", so two agents' workplace rules could not fire.
 */
export const defaultProfiles: Profile[] = [
  {
    id: "lin-wei", name: "Lin Wei", age: 32, occupation: "Cafe owner", emoji: "👩‍🍳",
    personality: "Warm, social and nurturing; remembers everyone's favourite drink.",
    home: "Lin Wei's Home", workplaces: ["Sunrise Cafe"], openHours: [7, 17],
    relationships: {
      "zhang-hao": "Close friend who writes at her cafe most mornings",
      "chen-mei": "Good friend and fellow shop owner",
      "liu-yang": "A young regular customer who orders oat lattes",
      "wang-jun": "A respected elder who comes by for tea",
    },
    routine: [
      r("06:00", "wake up and get ready for the day", "Lin Wei's Home"),
      r("07:00", "open the Sunrise Cafe", "Sunrise Cafe"),
      r("08:00", "brew coffee for the morning regulars", "Sunrise Cafe"),
      r("11:30", "serve the midday rush", "Sunrise Cafe"),
      r("14:00", "bake pastries for the afternoon", "Sunrise Cafe"),
      r("17:00", "close up the cafe", "Sunrise Cafe"),
      r("18:00", "buy groceries at the general store", "Chen's General Store", [{ activity: "stroll around the town square", location: "Town Square" }]),
      r("19:30", "eat dinner at home", "Lin Wei's Home"),
      r("21:00", "read a novel before bed", "Lin Wei's Home"),
      r("22:00", "sleep", "Lin Wei's Home"),
    ],
  },
  {
    id: "zhang-hao", name: "Zhang Hao", age: 28, occupation: "Writer", emoji: "✍️",
    personality: "Introverted and observant; fighting a long writer's block.",
    home: "Zhang Hao's Home", workplaces: ["Zhang Hao's Home", "Town Library"], openHours: [8, 18],
    relationships: {
      "lin-wei": "Close friend; her cafe is his morning office",
      "wang-jun": "His former professor and mentor",
      "chen-mei": "Runs the store where he buys notebooks",
      "liu-yang": "A student he sees at the library",
    },
    routine: [
      r("07:00", "wake up and make tea", "Zhang Hao's Home"),
      r("08:00", "have morning coffee at the cafe", "Sunrise Cafe"),
      r("09:30", "write the next chapter at the library", "Town Library"),
      r("12:00", "lunch at the cafe", "Sunrise Cafe", [{ activity: "lunch on a bench in the park", location: "Town Park" }]),
      r("13:00", "draft revisions at the library", "Town Library"),
      r("16:30", "take a walk in the park for inspiration", "Town Park"),
      r("18:00", "chat with friends at the town square", "Town Square"),
      r("19:30", "cook dinner at home", "Zhang Hao's Home"),
      r("21:00", "read before bed", "Zhang Hao's Home"),
      r("22:30", "sleep", "Zhang Hao's Home"),
    ],
  },
  {
    id: "chen-mei", name: "Chen Mei", age: 45, occupation: "Shop owner", emoji: "🏪",
    personality: "Practical and observant; the town's community connector.",
    home: "Chen Mei's Home", workplaces: ["Chen's General Store"], openHours: [8, 18],
    relationships: {
      "lin-wei": "Good friend; they swap supplies and gossip",
      "zhang-hao": "A quiet customer who buys notebooks",
      "liu-yang": "A student who comes by for snacks",
      "wang-jun": "A neighbour she greets every morning",
    },
    routine: [
      r("06:30", "wake up and water the plants", "Chen Mei's Home"),
      r("07:30", "open Chen's General Store", "Chen's General Store"),
      r("09:00", "restock the shelves", "Chen's General Store"),
      r("11:30", "pick up lunch at the cafe", "Sunrise Cafe"),
      r("12:30", "afternoon shift at the store", "Chen's General Store"),
      r("16:00", "take a walk to the town square for fresh air", "Town Square"),
      r("17:00", "close up the shop", "Chen's General Store"),
      r("18:00", "chat with neighbours at the cafe", "Sunrise Cafe", [{ activity: "chat with neighbours at the town square", location: "Town Square" }]),
      r("20:00", "go home and tidy up", "Chen Mei's Home"),
      r("22:00", "sleep", "Chen Mei's Home"),
    ],
  },
  {
    id: "liu-yang", name: "Liu Yang", age: 20, occupation: "University student", emoji: "🎒",
    personality: "Curious, energetic and idealistic; studies environmental science.",
    home: "Liu Yang's Home", workplaces: ["Town Library"], openHours: [8, 19],
    relationships: {
      "wang-jun": "A retired professor who mentors her",
      "lin-wei": "Runs the cafe she studies near",
      "chen-mei": "Sells her snacks",
      "zhang-hao": "A writer she sees at the library",
    },
    routine: [
      r("07:30", "wake up", "Liu Yang's Home"),
      r("08:30", "study at the library", "Town Library"),
      r("10:30", "take a break in the park", "Town Park"),
      r("12:00", "lunch at the cafe", "Sunrise Cafe"),
      r("13:00", "afternoon study session at the library", "Town Library"),
      r("15:30", "explore the community garden", "Community Garden"),
      r("17:00", "visit the shop for snacks", "Chen's General Store"),
      r("18:30", "hang out at the town square", "Town Square"),
      r("20:00", "stargaze in the park", "Town Park"),
      r("22:00", "sleep", "Liu Yang's Home"),
    ],
  },
  {
    id: "wang-jun", name: "Wang Jun", age: 68, occupation: "Retired philosophy professor", emoji: "🎓",
    personality: "Wise, calm and mentor-like; dry humour; takes daily walks.",
    home: "Wang Jun's Home", workplaces: ["Town Library"], openHours: [8, 19],
    relationships: {
      "zhang-hao": "A former student he still mentors",
      "liu-yang": "A bright student he guides and teaches",
      "lin-wei": "Makes his favourite tea",
      "chen-mei": "A neighbour with sharp opinions",
    },
    routine: [
      r("06:00", "practice tai chi in the park", "Town Park"),
      r("07:30", "breakfast at home", "Wang Jun's Home"),
      r("09:00", "read philosophy at the library", "Town Library"),
      r("11:30", "have tea at the cafe", "Sunrise Cafe"),
      r("13:00", "lunch at home", "Wang Jun's Home"),
      r("14:30", "walk in the park", "Town Park"),
      r("16:00", "meditate at the temple", "Temple"),
      r("17:30", "visit the town square", "Town Square"),
      r("20:00", "evening reading at home", "Wang Jun's Home"),
      r("21:30", "sleep", "Wang Jun's Home"),
    ],
  },
];

export const defaultTownConfig: TownConfig = {
  map: baseMap,
  clock: { tickMinutes: 30, startHour: 6, endHour: 23 },
  // Cells per 30-minute tick. The release used 3, which left most routine places unreachable
  // within their time slot (reference §2.13); 30 makes a cross-town trip take one or two ticks.
  speed: 30,
  agents: defaultProfiles,
  extraAgents: 0,
  memory: { capacity: 200, reflectionThreshold: 10, decay: 0.01, weights: { recency: 0.3, importance: 0.4, relevance: 0.3 } },
  conversation: { cooldownTicks: 2 },
  // How many co-located others an agent notices per tick (named in its observation, refreshed in
  // its beliefs). The paper's town never has more than 4 others; crowds in scaled towns would
  // otherwise make every tick quadratic in the crowd size.
  perception: { attention: 12 },
  incidents: { rate: 0.2, stressfulShare: 0.5 },
  routineNoise: { delayProbability: 0.25 },
  features: { conversations: true, reflection: true },
};

/** Named conditions: patches on the world config that differ between paired forks. */
export const townConditions: Readonly<Record<string, { readonly description: string; readonly apply: (c: TownConfig) => TownConfig }>> = {
  baseline: { description: "paper semantics, all mechanisms on", apply: (c) => c },
  "no-reflection": {
    description: "agents never reflect (memory ablation)",
    apply: (c) => ({ ...c, features: { ...c.features, reflection: false } }),
  },
  "no-conversation": {
    description: "co-located agents never converse",
    apply: (c) => ({ ...c, features: { ...c.features, conversations: false } }),
  },
};

/** Extra residents for scale runs: copies of the five archetypes' routines, homes and workplaces. */
export function rosterOf(config: TownConfig): Profile[] {
  const roster = [...config.agents];
  for (let i = 0; i < config.extraAgents; i++) {
    const archetype = config.agents[i % config.agents.length]!;
    const n = config.agents.length + i + 1;
    roster.push({
      ...archetype,
      id: `resident-${String(n).padStart(4, "0")}`,
      name: `Resident ${n}`,
      relationships: {},
    });
  }
  return roster;
}

const parseRoutineTime = (text: string): number => {
  const [h, m] = text.split(":").map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
};

/** Checks cross-references the schema cannot: places exist, routine times parse, ids are unique. */
export function configProblems(config: TownConfig): string[] {
  const problems: string[] = [];
  const names = new Set(config.map.locations.map((l) => l.name));
  const ids = new Set<string>();
  if (config.speed <= 0) problems.push(`speed: expected a positive number of cells per tick, got ${config.speed}`);
  if (config.extraAgents < 0) problems.push(`extraAgents: expected 0 or more, got ${config.extraAgents}`);
  if (config.clock.endHour <= config.clock.startHour) problems.push("clock: endHour must be after startHour");
  if (config.perception.attention < 1) problems.push(`perception.attention: expected 1 or more, got ${config.perception.attention}`);
  const { tickMinutes, startHour, endHour } = config.clock;
  if (startHour < 0 || endHour > 24) problems.push(`clock: expected 0 ≤ startHour < endHour ≤ 24, got ${startHour}–${endHour}`);
  if (tickMinutes <= 0 || ((endHour - startHour) * 60) % tickMinutes !== 0) problems.push(`clock.tickMinutes: expected a positive number of minutes that divides the day (${startHour}:00–${endHour}:00) evenly, got ${tickMinutes}`);
  if (config.agents.length === 0) problems.push("agents: expected at least one resident");
  if (config.memory.capacity < 1) problems.push(`memory.capacity: expected 1 or more items, got ${config.memory.capacity}`);
  if (config.memory.reflectionThreshold < 1) problems.push(`memory.reflectionThreshold: expected 1 or more observations, got ${config.memory.reflectionThreshold}`);
  if (!(config.memory.decay >= 0)) problems.push(`memory.decay: expected 0 or more per minute, got ${config.memory.decay}`);
  for (const [name, w] of Object.entries(config.memory.weights)) if (!(w >= 0)) problems.push(`memory.weights.${name}: expected 0 or more, got ${w}`);
  if (config.conversation.cooldownTicks < 0) problems.push(`conversation.cooldownTicks: expected 0 or more, got ${config.conversation.cooldownTicks}`);
  const probability = (field: string, p: number) => {
    if (!(p >= 0 && p <= 1)) problems.push(`${field}: expected a probability in [0, 1], got ${p}`);
  };
  probability("incidents.rate", config.incidents.rate);
  probability("incidents.stressfulShare", config.incidents.stressfulShare);
  probability("routineNoise.delayProbability", config.routineNoise.delayProbability);
  const dayStart = config.clock.startHour * 60;
  const dayEnd = config.clock.endHour * 60;
  config.agents.forEach((p, i) => {
    const at = `agents[${i}] (${p.id})`;
    if (ids.has(p.id)) problems.push(`${at}: duplicate id`);
    ids.add(p.id);
    if (!/^[a-z0-9-]+$/.test(p.id)) problems.push(`${at}: id must be lower-case letters, digits and dashes`);
    if (!names.has(p.home)) problems.push(`${at}.home: no location named '${p.home}'`);
    for (const w of p.workplaces) if (!names.has(w)) problems.push(`${at}.workplaces: no location named '${w}'`);
    if (p.routine.length === 0) problems.push(`${at}.routine: needs at least one entry`);
    p.routine.forEach((e, j) => {
      const m = /^(\d{1,2}):(\d{2})$/.exec(e.at);
      const minutes = m === null ? NaN : Number(m[1]) * 60 + Number(m[2]);
      if (m === null || Number(m[2]) > 59) problems.push(`${at}.routine[${j}].at: expected HH:MM, got '${e.at}'`);
      else if (minutes < dayStart || minutes >= dayEnd) problems.push(`${at}.routine[${j}].at: ${e.at} is outside the simulated day (${config.clock.startHour}:00–${config.clock.endHour}:00)`);
      else if (j > 0 && minutes <= parseRoutineTime(p.routine[j - 1]!.at)) problems.push(`${at}.routine[${j}].at: ${e.at} must be later than the previous entry`);
      for (const place of [e.location, ...(e.alternatives ?? []).map((a) => a.location)]) {
        if (!names.has(place)) problems.push(`${at}.routine[${j}]: no location named '${place}'`);
      }
    });
  });
  return problems;
}
