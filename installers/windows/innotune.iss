; Inno Setup script for InnoTune on Windows (Inno Setup 6.3 or later).
;
; Build the frozen program first, on Windows, from the checkout:
;   py -3.11 -m venv .venv && .venv\Scripts\pip install -e ".[dist]"
;   .venv\Scripts\pyinstaller --noconfirm --clean --distpath dist --workpath build installers\innotune.spec
; then:
;   iscc /DAppVersion=0.1.0 installers\windows\innotune.iss
; which writes dist\innotune-0.1.0-windows-x64-setup.exe. See installers/README.md.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "InnoTune"
#define Root "..\.."

[Setup]
; The AppId identifies the installation for upgrades and uninstall: never change it.
AppId={{6F1D2C0B-7E3A-4C39-9B5E-1A7C2E4D9F60}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=InnoTune contributors
AppComments=Tune MySQL and MariaDB write performance, with previews, snapshots and rollback
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user by default (no administrator needed); the user may choose all users instead.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
SetupIconFile={#Root}\resources\icons\innotune.ico
UninstallDisplayIcon={app}\innotune.exe
UninstallDisplayName={#AppName} {#AppVersion}
OutputDir={#Root}\dist
OutputBaseFilename=innotune-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; Lets "innotune-cli" be found from a new terminal (ChangesEnvironment broadcasts the change).
ChangesEnvironment=yes
; InnoTune keeps its data, logs and known hosts under %APPDATA%\InnoTune\InnoTune
; (QStandardPaths AppDataLocation); uninstalling leaves them, as users expect for snapshots.

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add innotune-cli to the PATH (command line use)"; Flags: unchecked

[Files]
; The whole PyInstaller onedir build: innotune.exe (the wizard), innotune-cli.exe (the command
; line, with a console) and _internal\.
Source: "{#Root}\dist\innotune\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; A fresh _internal on upgrade: files of an older version must not linger among the new ones.
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\innotune.exe"; Comment: "Tune MySQL and MariaDB writes"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\innotune.exe"; Tasks: desktopicon

[Registry]
; The installing user's PATH (HKCU), also in an all-users install; uninstalling leaves it.
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\innotune.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Paths: string;
begin
  if not RegQueryStringValue(HKCU, 'Environment', 'Path', Paths) then
    Paths := '';
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Paths) + ';') = 0;
end;
