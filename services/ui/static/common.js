// What the dashboard's views share: htm bound to Preact, and the API's JSON (its error message on failure).
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);

export async function getJson(url, init) {
  const response = await fetch(url, init);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${response.status}`);
  return body;
}

export const episodeLink = (id, seq) => `#/episode?id=${encodeURIComponent(id)}${seq === undefined ? "" : `&seq=${seq}`}`;
export const compareLink = (a, b) => `#/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;
export const sweepLink = (file) => `#/sweep?file=${encodeURIComponent(file)}`;
